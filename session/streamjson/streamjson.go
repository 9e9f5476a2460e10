// Package streamjson writes a headless run in troupe's output formats,
// stream-json above all: the protocol of Claude Code's --output-format
// stream-json (init, assistant and user messages, system events, the
// result), with troupe's background-task events and budget totals.
package streamjson

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/budget"
	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/llm/endpoint"
	"github.com/troupe-dev/troupe/task"
)

// Writer prints a run in one of the output formats: text (the result's
// text), json (the result as one object) or stream-json (one JSON object
// a line: init, messages, system events, background tasks' events and the
// result, "type" first). It is safe for concurrent use.
type Writer struct {
	w       io.Writer
	format  string
	session string
	info    llm.Info
	// Progress, when set, gets the progress lines of the text and json
	// formats (model retries), which stream-json carries as events;
	// Endpoint words them.
	Progress io.Writer
	Endpoint endpoint.Server
	// Meter is the session's spending: the result carries its totals,
	// total_cost_usd and usage_by_agent and usage_by_model alike.
	Meter *budget.Meter

	mu sync.Mutex // serializes writes from parallel tool calls
}

// New returns a Writer of format to w for session, whose lead runs on info.
func New(w io.Writer, format, session string, info llm.Info) *Writer {
	return &Writer{w: w, format: format, session: session, info: info}
}

func (e *Writer) line(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.w.Write(append(b, '\n'))
}

// Lines of the stream-json format, one JSON object a line, "type" first.
type (
	streamInit struct {
		Type      string   `json:"type"`
		Subtype   string   `json:"subtype"`
		SessionID string   `json:"session_id"`
		Cwd       string   `json:"cwd"`
		Provider  string   `json:"provider"`
		Model     string   `json:"model"`
		Tools     []string `json:"tools"`
	}
	streamMessage struct {
		Type      string       `json:"type"`
		SessionID string       `json:"session_id"`
		Message   *llm.Message `json:"message"`
		Usage     *llm.Usage   `json:"usage,omitempty"`
	}
	streamSystem struct {
		Type      string `json:"type"`
		Subtype   string `json:"subtype"`
		SessionID string `json:"session_id"`
		Error     string `json:"error,omitempty"`
		Summary   string `json:"summary,omitempty"`
	}
	streamResult struct {
		Type         string         `json:"type"`
		Subtype      string         `json:"subtype"`
		IsError      bool           `json:"is_error"`
		SessionID    string         `json:"session_id"`
		Result       string         `json:"result"`
		NumTurns     int            `json:"num_turns"`
		ToolUses     int            `json:"tool_uses"`
		DurationMS   int64          `json:"duration_ms"`
		StopReason   llm.StopReason `json:"stop_reason"`
		Usage        llm.Usage      `json:"usage"`
		TotalCostUSD *float64       `json:"total_cost_usd,omitempty"`
		Provider     string         `json:"provider"`
		Model        string         `json:"model"`
		Error        string         `json:"error,omitempty"`
		// The session's spending by agent and by model.
		budgetTotals
	}
)

// Task writes a background task's stream-json event.
func (e *Writer) Task(se task.SystemEvent) {
	if e.format == "stream-json" {
		e.line(se)
	}
}

// Init writes the stream-json init line: where the lead works and its
// tools.
func (e *Writer) Init(cwd string, tools []string) {
	if e.format != "stream-json" {
		return
	}
	if tools == nil {
		tools = []string{}
	}
	e.line(streamInit{"system", "init", e.session, cwd, e.info.Provider, e.info.Model, tools})
}

// Event writes one of the lead's agent events.
func (e *Writer) Event(ev agent.Event) {
	if e.format != "stream-json" {
		if ev.Type == agent.EventRetry && e.Progress != nil {
			e.mu.Lock()
			fmt.Fprintln(e.Progress, e.Endpoint.RetryLine(ev.Err))
			e.mu.Unlock()
		}
		return
	}
	switch ev.Type {
	case agent.EventAssistant:
		e.line(streamMessage{"assistant", e.session, ev.Message, ev.Usage})
	case agent.EventUser:
		e.line(streamMessage{"user", e.session, ev.Message, nil})
	case agent.EventRetry:
		e.line(streamSystem{Type: "system", Subtype: "retry", SessionID: e.session, Error: errString(ev.Err)})
	case agent.EventCompact:
		e.line(streamSystem{Type: "system", Subtype: "compact", SessionID: e.session, Summary: ev.Text})
	}
}

// Finish prints the run's result and returns the command's error.
func (e *Writer) Finish(res agent.Result, runErr error) error {
	r := streamResult{Type: "result", Subtype: "success", SessionID: e.session, Result: res.Text,
		NumTurns: res.Calls, ToolUses: res.ToolUses, DurationMS: res.Duration.Milliseconds(),
		StopReason: res.StopReason, Usage: res.Usage, Provider: e.info.Provider, Model: e.info.Model}
	switch {
	case runErr != nil:
		r.Subtype, r.Error = "error_during_execution", runErr.Error()
	case res.StopReason == agent.StopMaxTurns:
		r.Subtype = "error_max_turns"
	case res.Interrupted:
		r.Subtype = "interrupted"
	}
	e.budgetResult(&r, runErr) // the whole session's totals
	r.IsError = r.Subtype != "success"
	switch e.format {
	case "stream-json":
		e.line(r)
	case "json":
		b, _ := json.MarshalIndent(r, "", "  ")
		e.mu.Lock()
		fmt.Fprintln(e.w, string(b))
		e.mu.Unlock()
	default:
		if res.Text != "" {
			fmt.Fprintln(e.w, res.Text)
		}
	}
	switch {
	case runErr != nil:
		return runErr
	case res.StopReason == agent.StopMaxTurns:
		return fmt.Errorf("stopped at the --max-turns limit (%d model calls) before the task was done", res.Calls)
	case res.Interrupted:
		return errors.New("interrupted")
	}
	return nil
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// streamBudget is the stream-json event of a limit reached.
type streamBudget struct {
	Type      string  `json:"type"`
	Subtype   string  `json:"subtype"`
	SessionID string  `json:"session_id"`
	Error     string  `json:"error"`
	CostUSD   float64 `json:"total_cost_usd"`
	Tokens    int64   `json:"total_tokens"`
}

// BudgetExceeded tells the person that a limit was reached: a stream-json
// event, or a line on notice (stderr) in the other formats.
func (e *Writer) BudgetExceeded(ee *budget.ExceededError, notice io.Writer) {
	total := e.Meter.Total()
	msg := ee.Error() + "; no new model call starts, teammates are asked to shut down, and the run ends"
	if e.format == "stream-json" {
		e.line(streamBudget{"system", "budget_exceeded", e.session, msg, total.USD, total.Tokens()})
		return
	}
	if notice != nil {
		e.mu.Lock()
		fmt.Fprintf(notice, "troupe: %s\n", msg)
		e.mu.Unlock()
	}
}

// budgetTotals are the result's spending by agent and by model.
type budgetTotals struct {
	ByAgent map[string]Spend `json:"usage_by_agent,omitempty"`
	ByModel map[string]Spend `json:"usage_by_model,omitempty"`
}

// Spend is one agent's or model's line of the result's totals (and
// of troupe usage --json).
type Spend struct {
	InputTokens      int64    `json:"input_tokens"`
	OutputTokens     int64    `json:"output_tokens"`
	CacheReadTokens  int64    `json:"cache_read_input_tokens,omitempty"`
	CacheWriteTokens int64    `json:"cache_creation_input_tokens,omitempty"`
	Calls            int      `json:"calls"`
	CostUSD          float64  `json:"cost_usd"`
	Unpriced         []string `json:"unpriced_models,omitempty"`
}

// SpendLine is s as a line of the totals.
func SpendLine(s budget.Spend) Spend {
	return Spend{s.Usage.InputTokens, s.Usage.OutputTokens, s.Usage.CacheReadTokens, s.Usage.CacheWriteTokens, s.Calls, s.USD, s.Unpriced}
}

// SpendLines are m's lines of the totals.
func SpendLines(m map[string]budget.Spend) map[string]Spend {
	out := make(map[string]Spend, len(m))
	for k, v := range m {
		out[k] = SpendLine(v)
	}
	return out
}

// budgetResult puts the session's totals on the result: the cost of
// every agent of the session (not only the lead's), by agent and by
// model, and error_max_budget_usd (or error_max_tokens) when a limit
// ended the run.
func (e *Writer) budgetResult(r *streamResult, runErr error) {
	var ee *budget.ExceededError
	if errors.As(runErr, &ee) {
		r.Subtype = "error_max_budget_usd"
		if ee.Limit == "--max-tokens" || ee.Limit == "maxTokens" {
			r.Subtype = "error_max_tokens"
		}
	}
	if e.Meter == nil {
		return
	}
	// One reading of the meter: the total and its lines are the same
	// calls at the same prices. A total leaving out unpriced models
	// would understate the cost: it is left out, and the lines name them.
	total, byAgent, byModel := e.Meter.Totals()
	if len(total.Unpriced) == 0 {
		r.TotalCostUSD = &total.USD
	}
	r.ByAgent, r.ByModel = SpendLines(byAgent), SpendLines(byModel)
}

// TeamEvent writes one line of the team's timeline as a stream-json
// team_event and reports true; in the other formats it writes nothing
// and reports false (the caller prints the timeline elsewhere).
func (e *Writer) TeamEvent(agent, kind, text string) bool {
	if e.format != "stream-json" {
		return false
	}
	e.line(streamTeam{"system", "team_event", e.session, agent, kind, text})
	return true
}

// PeerMessage writes another session's message (docs/teams.md,
// "Addressing") as a stream-json cross_session_message event and reports
// true; in the other formats it writes nothing and reports false.
func (e *Writer) PeerMessage(from, session, summary, text string) bool {
	if e.format != "stream-json" {
		return false
	}
	e.line(streamPeer{"system", "cross_session_message", e.session, from, session, summary, text})
	return true
}

type streamPeer struct {
	Type        string `json:"type"`
	Subtype     string `json:"subtype"`
	Session     string `json:"session_id"`
	From        string `json:"from"`
	FromSession string `json:"from_session"`
	Summary     string `json:"summary,omitempty"`
	Text        string `json:"text"`
}

type streamTeam struct {
	Type    string `json:"type"`
	Subtype string `json:"subtype"`
	Session string `json:"session_id"`
	Agent   string `json:"agent"`
	Kind    string `json:"kind"`
	Text    string `json:"text"`
}

// Notice writes line to w (stderr) under the Writer's lock, so that the
// lines that many goroutines write there (the team's timeline, budget
// and remote notices) never interleave.
func (e *Writer) Notice(w io.Writer, line string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	fmt.Fprintln(w, line)
}
