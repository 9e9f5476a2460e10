// Package inbox provides the tools an agent that has no troupe runner
// around it (an MCP client attached through troupe mcp serve) needs to
// live in a team: ReadInbox, WaitForWork and TeamMembers. The runner of an
// in-process or pane teammate does these things itself; here the agent's
// model does them by calling tools.
//
// The tools are safe for concurrent use. Reading marks what was returned
// read, so two readers of one inbox never both get a message.
package inbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/team"
	"github.com/troupe-dev/troupe/tool"
)

// Defaults of WaitForWork.
const (
	DefaultWait = 5 * time.Minute
	MaxWait     = 30 * time.Minute
)

// Config says whose inbox the tools read.
type Config struct {
	Teams team.Store
	Mail  mailbox.Store
	Tasks tasklist.Store
	Team  string // the team
	Name  string // the member
	Color string
	Now   func() time.Time
	// OnShutdownRequest, when set, is told of each shutdown request read,
	// so the caller can follow the answer.
	OnShutdownRequest func(requestID string)
}

// Tools returns ReadInbox, WaitForWork and TeamMembers.
func Tools(cfg Config) []tool.Tool {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	e := &env{cfg: cfg}
	return []tool.Tool{&readInbox{e}, &waitForWork{e}, &members{e}}
}

type env struct {
	cfg Config

	mu       sync.Mutex
	idleSent bool // an idle notification was sent since the last work; guarded by mu
}

// read returns the unread messages, marking them read, rendered for the
// model.
func (e *env) read(ctx context.Context) (string, int, error) {
	msgs, err := e.cfg.Mail.Read(ctx, e.cfg.Team, e.cfg.Name, true)
	if err != nil {
		return "", 0, err
	}
	if len(msgs) == 0 {
		return "", 0, nil
	}
	ids := make([]string, len(msgs))
	var b strings.Builder
	for i, m := range msgs {
		ids[i] = m.ID
		fmt.Fprintf(&b, "<message from=%q at=%q", m.From, m.Timestamp.UTC().Format(time.RFC3339))
		if f, err := mailbox.Decode(m.Text); err == nil && f != nil {
			fmt.Fprintf(&b, " kind=%q", f.Kind())
			if sr, ok := f.(mailbox.ShutdownRequest); ok && e.cfg.OnShutdownRequest != nil {
				e.cfg.OnShutdownRequest(sr.RequestID)
			}
		}
		if m.Summary != "" {
			fmt.Fprintf(&b, " summary=%q", m.Summary)
		}
		b.WriteString(">\n" + m.Text + "\n</message>\n")
	}
	if _, err := e.cfg.Mail.MarkRead(ctx, e.cfg.Team, e.cfg.Name, ids); err != nil {
		return "", 0, err
	}
	e.mu.Lock()
	e.idleSent = false
	e.mu.Unlock()
	return b.String(), len(msgs), nil
}

// claimable returns the tasks the member may claim now: pending, no
// owner, no open blockers.
func (e *env) claimable(ctx context.Context) ([]tasklist.Task, error) {
	ts, err := tasklist.New(e.cfg.Tasks, e.cfg.Team).Tasks(ctx)
	if err != nil && len(ts) == 0 {
		return nil, err
	}
	var out []tasklist.Task
	for _, t := range tasklist.Ready(ts) {
		if t.Owner == "" {
			out = append(out, t)
		}
	}
	return out, nil
}

// idle sends the lead one idle notification per stretch of idleness.
func (e *env) idle(ctx context.Context) error {
	e.mu.Lock()
	if e.idleSent {
		e.mu.Unlock()
		return nil
	}
	e.idleSent = true
	e.mu.Unlock()
	text, err := mailbox.Encode(mailbox.IdleNotification{From: e.cfg.Name, Timestamp: e.cfg.Now().UTC().Format(mailbox.TimeLayout), IdleReason: mailbox.IdleAvailable})
	if err != nil {
		return err
	}
	_, err = e.cfg.Mail.Send(ctx, e.cfg.Team, team.LeadName, mailbox.Message{From: e.cfg.Name, Color: e.cfg.Color, Text: text, Timestamp: e.cfg.Now()})
	return err
}

type readInbox struct{ e *env }

func (*readInbox) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "ReadInbox",
		Description: "Read your unread team messages (from the lead and teammates), oldest first; they are marked read. Structured messages (shutdown requests, plan approvals, task assignments) carry a kind and their JSON.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)}
}

func (*readInbox) ReadOnly(json.RawMessage) bool { return false }

func (r *readInbox) Run(ctx context.Context, c tool.Call) (tool.Result, error) {
	var in struct{}
	if res, ok := tool.Decode("ReadInbox", c.Input, &in); !ok {
		return res, nil
	}
	text, n, err := r.e.read(ctx)
	if err != nil {
		return failed(ctx, "ReadInbox", err)
	}
	if n == 0 {
		return tool.Result{Content: "No unread messages."}, nil
	}
	return tool.Result{Content: text}, nil
}

type waitForWork struct{ e *env }

func (*waitForWork) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "WaitForWork",
		Description: "Call when you have nothing to do: tells the lead you are idle (once), then blocks until a message arrives (returned, and marked read) or a task you may claim exists (listed; claim it with TaskUpdate setting owner to your name and status in_progress), or until timeout_seconds pass (default 300, at most 1800).",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"timeout_seconds":{"type":"integer","minimum":1,"maximum":1800}},"additionalProperties":false}`)}
}

func (*waitForWork) ReadOnly(json.RawMessage) bool { return false }

func (w *waitForWork) Run(ctx context.Context, c tool.Call) (tool.Result, error) {
	var in struct {
		Timeout int `json:"timeout_seconds"`
	}
	if res, ok := tool.Decode("WaitForWork", c.Input, &in); !ok {
		return res, nil
	}
	wait := DefaultWait
	if in.Timeout < 0 || time.Duration(in.Timeout)*time.Second > MaxWait {
		return tool.Errorf("WaitForWork: timeout_seconds must be between 1 and %d", int(MaxWait/time.Second)), nil
	} else if in.Timeout > 0 {
		wait = time.Duration(in.Timeout) * time.Second
	}
	e := w.e
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	kicks, err := e.cfg.Mail.Watch(wctx, e.cfg.Team, e.cfg.Name)
	if err != nil {
		return failed(ctx, "WaitForWork", err)
	}
	// Tasks have no watch in every store: they are looked at on each
	// inbox kick and every poll interval.
	poll := time.NewTicker(time.Second)
	defer poll.Stop()
	idleSent := false
	for {
		text, n, err := e.read(ctx)
		if err != nil {
			return failed(ctx, "WaitForWork", err)
		}
		if n > 0 {
			return tool.Result{Content: text}, nil
		}
		ts, err := e.claimable(ctx)
		if err != nil {
			return failed(ctx, "WaitForWork", err)
		}
		if len(ts) > 0 {
			e.mu.Lock()
			e.idleSent = false // work was handed out: the next idleness is news
			e.mu.Unlock()
			var b strings.Builder
			b.WriteString("Tasks you may claim (TaskUpdate with owner set to your name and status in_progress):\n")
			for _, t := range ts {
				fmt.Fprintf(&b, "#%s %s\n", t.ID, t.Subject)
			}
			return tool.Result{Content: b.String()}, nil
		}
		if !idleSent {
			if err := e.idle(ctx); err != nil {
				return failed(ctx, "WaitForWork", err)
			}
			idleSent = true
		}
		select {
		case <-ctx.Done():
			return tool.Result{}, context.Cause(ctx)
		case <-wctx.Done():
			return tool.Result{Content: fmt.Sprintf("Nothing arrived within %v. Call WaitForWork again to keep waiting.", wait)}, nil
		case <-kicks:
		case <-poll.C:
		}
	}
}

type members struct{ e *env }

func (*members) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "TeamMembers",
		Description: "List your team's members: name, agent id, backend and whether each is active. Send them messages with SendMessage.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)}
}

func (*members) ReadOnly(json.RawMessage) bool { return true }

func (m *members) Run(ctx context.Context, c tool.Call) (tool.Result, error) {
	var in struct{}
	if res, ok := tool.Decode("TeamMembers", c.Input, &in); !ok {
		return res, nil
	}
	cfg, err := m.e.cfg.Teams.Get(ctx, m.e.cfg.Team)
	if err != nil {
		return failed(ctx, "TeamMembers", err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Team %s (you are %s):\n", cfg.Name, m.e.cfg.Name)
	for _, mem := range cfg.Members {
		state := "active"
		if mem.IsActive != nil && !*mem.IsActive {
			state = "idle"
		}
		fmt.Fprintf(&b, "- %s (%s, %s, %s)\n", mem.Name, mem.AgentID, cmpOr(mem.BackendType, "lead"), state)
	}
	return tool.Result{Content: b.String()}, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// failed turns a store error into an error Result, or the context's end
// into a Go error.
func failed(ctx context.Context, name string, err error) (tool.Result, error) {
	if ctx.Err() != nil || errors.Is(err, context.Canceled) {
		return tool.Result{}, context.Cause(ctx)
	}
	return tool.Errorf("%s: %v", name, err), nil
}
