package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/budget"
	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/task"
)

// eventWriter prints a run in one of the output formats.
type eventWriter struct {
	w       io.Writer
	format  string
	session string
	info    llm.Info
	// progress, when set, gets the progress lines of the text and json
	// formats (model retries), which stream-json carries as events; ep
	// words them.
	progress io.Writer
	ep       llm.Endpoint
	// meter is the session's spending (budget.go).
	meter *budget.Meter

	mu sync.Mutex // serializes writes from parallel tool calls
}

func newEventWriter(w io.Writer, format, session string, info llm.Info) *eventWriter {
	return &eventWriter{w: w, format: format, session: session, info: info}
}

func (e *eventWriter) line(v any) {
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
		// The session's spending by agent and by model (budget.go).
		budgetTotals
	}
)

// task writes a background task's stream-json event.
func (e *eventWriter) task(se task.SystemEvent) {
	if e.format == "stream-json" {
		e.line(se)
	}
}

func (e *eventWriter) init(cwd string, tools []string) {
	if e.format != "stream-json" {
		return
	}
	if tools == nil {
		tools = []string{}
	}
	e.line(streamInit{"system", "init", e.session, cwd, e.info.Provider, e.info.Model, tools})
}

// event receives agent events.
func (e *eventWriter) event(ev agent.Event) {
	if e.format != "stream-json" {
		if ev.Type == agent.EventRetry && e.progress != nil {
			e.mu.Lock()
			fmt.Fprintln(e.progress, e.ep.RetryLine(ev.Err))
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

// finish prints the run's result and returns the command's error.
func (e *eventWriter) finish(res agent.Result, runErr error) error {
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
	if usd, ok := cost(e.info, res.Usage); ok {
		r.TotalCostUSD = &usd
	}
	e.budgetResult(&r, runErr) // budget.go: the whole session's totals
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
