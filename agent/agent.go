// Package agent runs one agent's turn loop: prompt the model, stream its
// answer, check and run the tools it calls (read-only calls in parallel,
// writing calls one at a time in the model's order), feed the results back,
// and repeat until the model ends its turn or a turn bound is hit.
//
// An Agent keeps its conversation across runs. It can be interrupted at two
// levels: Interrupt aborts the current run only (the agent takes the next
// prompt), Kill ends the agent. Messages sent while it works wait in a
// pending queue and reach the model at the next tool-round boundary.
// Progress is readable at any time without blocking the loop. Above a token
// threshold the conversation is compacted: summarized by the model and
// replaced by the summary plus recent context.
//
// An Agent is safe for concurrent use; Run calls are serialized (a second
// concurrent Run fails with ErrBusy).
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/tool"
)

// Errors and cancellation causes.
var (
	ErrBusy        = errors.New("agent: already running")
	ErrKilled      = errors.New("agent: killed")
	ErrInterrupted = errors.New("agent: interrupted")
)

// Defaults for Config.
const (
	DefaultMaxTurns       = 200
	DefaultKeepRecent     = 6
	DefaultCompactPercent = 80 // of the model's context window
)

// Approver decides whether a tool call may run. The permissions layer
// implements it; AllowAll allows everything.
type Approver interface {
	Approve(ctx context.Context, req Request) (Verdict, error)
}

// Request is a tool call awaiting permission.
type Request struct {
	Tool      string
	ToolUseID string
	Input     json.RawMessage
	ReadOnly  bool
	// Hook is a PreToolUse hook's permission decision: "allow" (skip
	// asking, but never over a deny rule or a protected path), "ask", or
	// "" when no hook decided.
	Hook string
}

// Verdict is an Approver's answer. A denial's Reason is shown to the model.
type Verdict struct {
	Allow        bool
	Reason       string
	UpdatedInput json.RawMessage // replaces the input when set
}

// AllowAll approves every call.
type AllowAll struct{}

// Approve implements Approver.
func (AllowAll) Approve(context.Context, Request) (Verdict, error) { return Verdict{Allow: true}, nil }

// Config sets up an Agent.
type Config struct {
	Model     llm.Model
	ModelName string // request model override; empty uses the provider default
	System    string
	// Environment, when set, is called at the start of each Run; its text
	// follows System after the prompt-cache breakpoint
	// (llm.Request.SystemVolatile): what changes between runs, such as
	// the date and the git state.
	Environment func(ctx context.Context) string
	Tools       *tool.Registry
	// Attach, when set, is called as each user message for the model is
	// made (a run's prompt, tool results, input that came in); its text,
	// when not empty, ends the message (attach.go).
	Attach   func() string
	Approver Approver // nil means AllowAll
	// Hooks, when set, are raised at the loop's events (PreToolUse,
	// PostToolUse, PostToolUseFailure, UserPromptSubmit, Stop, PreCompact).
	Hooks Hooks
	// MaxTurns bounds the model calls of one Run (default 200).
	MaxTurns  int
	MaxTokens int
	// CompactAt is the token count (input plus output of the last call)
	// above which the conversation is compacted before the next call.
	// Zero means DefaultCompactPercent of the model's context window;
	// negative disables compaction.
	CompactAt int
	// KeepRecent is how many of the latest messages survive compaction
	// beside the summary (default 6).
	KeepRecent int
	// Transcript, when set, receives one JSON event a line as the agent
	// runs.
	Transcript io.Writer
	// OnEvent, when set, is called for every Event, from the loop's
	// goroutine; it must not block for long.
	OnEvent func(Event)
	Now     func() time.Time
	// History is the conversation the agent continues (a resumed
	// session): its messages before the first Run. New refuses one that
	// CheckHistory finds wrong.
	History []llm.Message
	// Opening, when set, starts the first Run's user message, before its
	// prompt: the tool results that answer the tool uses History ends
	// with (a fork's placeholders, see Fork). An agent with an Opening
	// is a fork (IsFork).
	Opening []llm.Block
}

// Agent is one agent with its conversation.
type Agent struct {
	cfg   Config
	now   func() time.Time
	ctx   context.Context // the agent's lifetime; canceled by Kill
	kill  context.CancelCauseFunc
	trans *transcript

	mu        sync.Mutex
	messages  []llm.Message           // guarded by mu; written only by the running loop (and Absorb between runs)
	pending   []string                // guarded by mu
	opening   []llm.Block             // guarded by mu; Config.Opening until the first Run takes it
	running   bool                    // guarded by mu
	interrupt context.CancelCauseFunc // guarded by mu; cancels the current run
	progress  Progress                // guarded by mu
	volatile  string                  // guarded by mu; Config.Environment's text for the current run
	halted    bool                    // guarded by mu; a hook ended the current run
	haltWhy   string                  // guarded by mu
}

// New returns an agent. Model and Tools are required.
func New(cfg Config) (*Agent, error) {
	if cfg.Model == nil {
		return nil, errors.New("agent: no model")
	}
	if len(cfg.Opening) > 0 {
		if err := checkOpening(cfg); err != nil {
			return nil, err
		}
	} else if _, err := CheckHistory(cfg.History); err != nil {
		return nil, err
	}
	if cfg.Tools == nil {
		cfg.Tools, _ = tool.NewRegistry()
	}
	// The conversation's own set of loaded deferred tools, starting with
	// those it already called (a resumed or forked conversation).
	cfg.Tools = cfg.Tools.Fresh()
	cfg.Tools.Load(calledTools(cfg.History)...)
	if cfg.Approver == nil {
		cfg.Approver = AllowAll{}
	}
	if cfg.MaxTurns <= 0 {
		cfg.MaxTurns = DefaultMaxTurns
	}
	if cfg.KeepRecent <= 0 {
		cfg.KeepRecent = DefaultKeepRecent
	}
	if cfg.CompactAt == 0 {
		if w := cfg.Model.Info().ContextWindow; w > 0 {
			cfg.CompactAt = w * DefaultCompactPercent / 100
		} else {
			cfg.CompactAt = -1
		}
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	ctx, kill := context.WithCancelCause(context.Background())
	return &Agent{cfg: cfg, now: now, ctx: ctx, kill: kill, trans: newTranscript(cfg.Transcript, now),
		messages: cloneMessages(cfg.History), opening: cfg.Opening}, nil
}

// CheckHistory checks a conversation an agent is to continue: user and
// assistant messages alternate, starting with a user message; every tool
// use of an assistant message is answered by a tool result in the next
// message, and no other message holds tool results; no message is empty;
// and it ends with an assistant message without tool uses, so that the
// next prompt answers it. It returns the length of the longest prefix that
// is such a conversation (what a repair may keep), and for a conversation
// that is not one, an error naming the first message at fault.
func CheckHistory(ms []llm.Message) (complete int, err error) {
	var open []string // the tool uses the next message must answer
	for i, m := range ms {
		want := llm.RoleUser
		if i%2 == 1 {
			want = llm.RoleAssistant
		}
		if m.Role != want {
			return complete, fmt.Errorf("agent: history message %d: role %q, want %s (user and assistant messages alternate, starting with user)", i+1, m.Role, want)
		}
		if len(m.Content) == 0 {
			return complete, fmt.Errorf("agent: history message %d (%s) is empty", i+1, m.Role)
		}
		var results []string
		for _, b := range m.Content {
			if b.Type == llm.BlockToolResult {
				results = append(results, b.ToolUseID)
			}
		}
		if m.Role == llm.RoleAssistant {
			if len(results) > 0 {
				return complete, fmt.Errorf("agent: history message %d: an assistant message holds a tool result", i+1)
			}
			open = open[:0]
			for _, u := range m.ToolUses() {
				open = append(open, u.ToolUseID)
			}
			if len(open) == 0 {
				complete = i + 1
			}
			continue
		}
		for _, id := range results {
			if !slices.Contains(open, id) {
				return complete, fmt.Errorf("agent: history message %d: a tool result for %q, which the message before did not call", i+1, id)
			}
		}
		for _, id := range open {
			if !slices.Contains(results, id) {
				return complete, fmt.Errorf("agent: history message %d: tool use %q of the message before has no result", i+1, id)
			}
		}
		open = open[:0]
	}
	switch {
	case len(open) > 0:
		return complete, fmt.Errorf("agent: history ends with an unanswered tool use (%s)", strings.Join(open, ", "))
	case complete != len(ms):
		return complete, errors.New("agent: history ends with a user message the model has not answered")
	}
	return complete, nil
}

// Send queues a message for the model. While a run is in progress it is
// delivered at the next tool-round boundary; otherwise at the start of the
// next Run.
func (a *Agent) Send(text string) {
	a.mu.Lock()
	a.pending = append(a.pending, text)
	a.mu.Unlock()
}

// Pending returns how many messages wait for delivery.
func (a *Agent) Pending() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.pending)
}

// TakePending returns the messages waiting for delivery and empties the
// queue: input handed to an agent that will not run again goes to the
// one that takes its place (session.Session.Clear).
func (a *Agent) TakePending() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := a.pending
	a.pending = nil
	return out
}

// Interrupt aborts the current run, if any; the agent stays usable. It
// reports whether a run was interrupted.
func (a *Agent) Interrupt() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.interrupt == nil {
		return false
	}
	a.interrupt(ErrInterrupted)
	return true
}

// Kill ends the agent: a run in progress stops and every later Run fails
// with ErrKilled.
func (a *Agent) Kill() { a.kill(ErrKilled) }

// Messages returns a copy of the conversation.
func (a *Agent) Messages() []llm.Message {
	a.mu.Lock()
	defer a.mu.Unlock()
	return cloneMessages(a.messages)
}

// Progress returns a snapshot of the agent's progress.
func (a *Agent) Progress() Progress {
	a.mu.Lock()
	defer a.mu.Unlock()
	p := a.progress
	p.Recent = append([]Activity(nil), p.Recent...)
	return p
}

// Result is the outcome of one Run.
type Result struct {
	Text        string         // the final assistant text
	StopReason  llm.StopReason // the last model stop reason, or "max_turns"
	Usage       llm.Usage      // summed over the run's model calls
	Calls       int            // model calls made
	ToolUses    int
	Duration    time.Duration
	Interrupted bool // Interrupt ended the run early
}

// Absorb puts the pending input into the conversation without a model
// call, for an agent whose runs are over (its session ends because no
// model call may start), so that a resumed conversation holds it: the
// text joins the last message when that is the user's (the turns keep
// alternating), else it becomes a user message of its own; either way an
// EventUser with the new text is emitted. It returns how many inputs it
// took, none while a run is going (the run takes them).
func (a *Agent) Absorb() int {
	a.mu.Lock()
	if a.running || len(a.pending) == 0 {
		a.mu.Unlock()
		return 0
	}
	blocks := a.takePendingLocked()
	if k := len(a.messages); k > 0 && a.messages[k-1].Role == llm.RoleUser {
		last := a.messages[k-1]
		last.Content = append(slices.Clip(last.Content), blocks...)
		a.messages[k-1] = last
	} else {
		a.messages = append(a.messages, llm.Message{Role: llm.RoleUser, Content: blocks})
	}
	a.mu.Unlock()
	a.emit(Event{Type: EventUser, Message: &llm.Message{Role: llm.RoleUser, Content: blocks}})
	return len(blocks)
}

// StopMaxTurns is Result.StopReason when MaxTurns ended the run.
const StopMaxTurns llm.StopReason = "max_turns"

// Run gives the agent a prompt (plus any pending messages) and loops until
// the model ends its turn, MaxTurns is hit, the run is interrupted (then the
// Result has Interrupted set and the error is nil), or the agent is killed
// or ctx canceled (then the error wraps the cause).
func (a *Agent) Run(ctx context.Context, prompt string) (Result, error) {
	a.mu.Lock()
	if a.running {
		a.mu.Unlock()
		return Result{}, ErrBusy
	}
	if err := context.Cause(a.ctx); err != nil {
		a.mu.Unlock()
		return Result{}, err
	}
	runCtx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(a.ctx, func() { cancel(context.Cause(a.ctx)) })
	a.running, a.interrupt = true, cancel
	a.halted, a.haltWhy = false, ""
	a.mu.Unlock()
	if a.cfg.Environment != nil {
		env := a.cfg.Environment(runCtx)
		a.mu.Lock()
		a.volatile = env
		a.mu.Unlock()
	}
	defer func() {
		stop()
		cancel(nil)
		a.mu.Lock()
		a.running, a.interrupt = false, nil
		a.mu.Unlock()
	}()
	return a.loop(runCtx, prompt)
}

func cloneMessages(ms []llm.Message) []llm.Message {
	out := make([]llm.Message, len(ms))
	for i, m := range ms {
		out[i] = llm.Message{Role: m.Role, Content: append([]llm.Block(nil), m.Content...)}
	}
	return out
}

// fail turns a run error into the Run result: an interrupt is a normal end.
func (a *Agent) fail(ctx context.Context, res Result, start time.Time, err error) (Result, error) {
	res.Duration = a.now().Sub(start)
	if errors.Is(context.Cause(ctx), ErrInterrupted) {
		res.Interrupted = true
		a.emit(Event{Type: EventResult, Result: &res})
		return res, nil
	}
	if cause := context.Cause(ctx); cause != nil {
		err = fmt.Errorf("%w (%v)", cause, err)
		if errors.Is(cause, ErrKilled) {
			err = ErrKilled
		}
	}
	return res, err
}

// errorf is a helper for wrapped loop errors.
func errorf(format string, args ...any) error { return fmt.Errorf("agent: "+format, args...) }

// calledTools returns the names of the tools the conversation ms called,
// and those a ToolSearch of it loaded (named in its results), so that a
// resumed conversation can call again what it had loaded.
func calledTools(ms []llm.Message) []string {
	var out []string
	search := map[string]bool{}
	for _, m := range ms {
		for _, b := range m.Content {
			switch b.Type {
			case llm.BlockToolUse:
				out = append(out, b.Name)
				if b.Name == ToolSearchName {
					search[b.ToolUseID] = true
				}
			case llm.BlockToolResult:
				if search[b.ToolUseID] && !b.IsError {
					out = append(out, loadedNames(b.Text)...)
				}
			}
		}
	}
	return out
}

// ToolSearchName is the tool that loads deferred tools (tool/toolsearch).
const ToolSearchName = "ToolSearch"

// loadedNames returns the tool names a ToolSearch result lists: the
// "name" fields of its definitions, one JSON object a line after the
// header (tool/toolsearch).
func loadedNames(text string) []string {
	var out []string
	for line := range strings.SplitSeq(text, "\n") {
		var d struct {
			Name string `json:"name"`
		}
		if strings.HasPrefix(line, "{") && json.Unmarshal([]byte(line), &d) == nil && d.Name != "" {
			out = append(out, d.Name)
		}
	}
	return out
}
