package agenttool

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/troupe-dev/troupe/llm"
	taskreg "github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/tool"
)

// SendMessage is the SendMessage tool for background sub-agents: it
// queues a message for a running one, or resumes a finished one with it
// (same agent and conversation, same task id, one new notification when
// the resumed run ends). Team messages (structured messages, broadcast,
// teammates) are not handled. It is safe for concurrent use.
type SendMessage struct{ t *Tool }

var _ tool.Tool = (*SendMessage)(nil)

// NewSendMessage returns the SendMessage tool addressing the background
// sub-agents of the Agent tool t.
func NewSendMessage(t *Tool) *SendMessage { return &SendMessage{t: t} }

//go:embed sendmessage.md
var sendMessageDescription string

const sendMessageSchema = `{
  "type": "object",
  "properties": {
    "to": {"type": "string", "description": "The task id (agentId) or name of a background agent; single line"},
    "message": {"type": "string", "description": "The message: a plain-text follow-up instruction"},
    "summary": {"type": "string", "maxLength": 200, "description": "Optional short (5-10 word) preview of the message"}
  },
  "required": ["to", "message"],
  "additionalProperties": false
}`

// Spec implements tool.Tool.
func (*SendMessage) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "SendMessage", Description: sendMessageDescription, InputSchema: json.RawMessage(sendMessageSchema)}
}

// ReadOnly implements tool.Tool: a resumed agent may change anything.
func (*SendMessage) ReadOnly(json.RawMessage) bool { return false }

type sendInput struct {
	To      string          `json:"to"`
	Message json.RawMessage `json:"message"`
	Summary string          `json:"summary"`
}

// Run implements tool.Tool. It returns a Go error only when ctx ends.
func (m *SendMessage) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	var in sendInput
	if res, ok := tool.Decode("SendMessage", call.Input, &in); !ok {
		return res, nil
	}
	in.To = strings.TrimSpace(in.To)
	raw := bytes.TrimSpace(in.Message)
	var text string
	switch {
	case in.To == "":
		return tool.Errorf("SendMessage: invalid input: to is required (the task id or name of a background agent)"), nil
	case strings.ContainsAny(in.To, "\r\n"):
		return tool.Errorf("SendMessage: invalid input: to must be a single line"), nil
	case in.To == "*":
		return tool.Errorf("SendMessage: broadcast (to: \"*\") is not supported; address one background agent by its task id or name"), nil
	case len(raw) == 0 || string(raw) == "null":
		return tool.Errorf("SendMessage: invalid input: message is required"), nil
	case raw[0] == '{':
		return tool.Errorf("SendMessage: structured messages (shutdown_request, shutdown_response, plan_approval_response) go to teammates, which are not available in this mode; send a background agent a plain-text message"), nil
	case json.Unmarshal(raw, &text) != nil:
		return tool.Errorf("SendMessage: invalid input: message must be a string, got JSON %s", raw), nil
	case strings.TrimSpace(text) == "":
		return tool.Errorf("SendMessage: invalid input: message is empty"), nil
	case len([]rune(in.Summary)) > 200:
		return tool.Errorf("SendMessage: invalid input: summary is longer than 200 characters"), nil
	}
	return m.t.deliver(ctx, call.ID, in.To, text)
}

// deliver queues text for the running background agent to, or resumes it
// with text when it has finished.
func (t *Tool) deliver(ctx context.Context, toolUseID, to, text string) (tool.Result, error) {
	t.mu.Lock()
	lv, ok := t.agents[to]
	if !ok {
		known := t.knownLocked()
		t.mu.Unlock()
		if known == "" {
			return tool.Errorf("SendMessage: no background agent %q: none has been started in this session (start one with the Agent tool and run_in_background: true)", to), nil
		}
		return tool.Errorf("SendMessage: no background agent %q; known agents: %s", to, known), nil
	}
	if lv.running {
		lv.ag.Send(text) // under mu: see park
		t.mu.Unlock()
		return tool.Result{Content: fmt.Sprintf("Message queued for agent %s; it is running and will receive it at its next tool-round boundary. You will be notified with its result when it completes.", label(lv))}, nil
	}
	if lv.wsGone {
		t.mu.Unlock()
		return tool.Errorf("SendMessage: agent %s cannot be resumed: it changed nothing in its worktree, which was removed when it ended; start a new agent", label(lv)), nil
	}
	// Resume it: mark it running first, so that concurrent messages queue.
	lv.running = true
	t.finished = slices.DeleteFunc(t.finished, func(x *live) bool { return x == lv })
	t.mu.Unlock()
	err := t.settle(ctx, lv.id)
	if err == nil {
		lv.tr.reset()
		err = t.launch(lv, toolUseID, text)
	}
	if err != nil {
		t.park(lv, true)
		if ctx.Err() != nil {
			return tool.Result{}, context.Cause(ctx)
		}
		return tool.Errorf("SendMessage: could not resume agent %s: %v", label(lv), err), nil
	}
	return tool.Result{Content: fmt.Sprintf("Agent %s had finished; it was resumed in the background with your message and its previous conversation (task id %s). You will be notified automatically with its result when it completes: do not poll it.", label(lv), lv.id)}, nil
}

// settle waits until the task id is no longer active in the registry: a
// run that has just ended is finished (and notified) right after its
// agent is parked, and a resume must not overlap it.
func (t *Tool) settle(ctx context.Context, id taskreg.ID) error {
	reg := t.cfg.Registry
	sub := reg.Subscribe()
	defer sub.Close()
	for {
		if s, ok := reg.Get(id); !ok || !s.Status.Active() {
			return nil
		}
		if _, err := sub.Next(ctx); err != nil {
			return err
		}
	}
}

// knownLocked lists the known background agents, "id (name N, status)"
// each, sorted by id.
func (t *Tool) knownLocked() string {
	seen := map[*live]bool{}
	var all []*live
	for _, lv := range t.agents {
		if !seen[lv] {
			seen[lv] = true
			all = append(all, lv)
		}
	}
	slices.SortFunc(all, func(a, b *live) int { return strings.Compare(string(a.id), string(b.id)) })
	parts := make([]string, len(all))
	for i, lv := range all {
		state := "finished"
		if lv.running {
			state = "running"
		}
		if lv.name != "" && t.agents[lv.name] == lv {
			parts[i] = fmt.Sprintf("%s (name %s, %s)", lv.id, lv.name, state)
		} else {
			parts[i] = fmt.Sprintf("%s (%s)", lv.id, state)
		}
	}
	return strings.Join(parts, ", ")
}

// label names lv for the model: its name and id, or its id.
func label(lv *live) string {
	if lv.name != "" {
		return fmt.Sprintf("%q (%s)", lv.name, lv.id)
	}
	return string(lv.id)
}
