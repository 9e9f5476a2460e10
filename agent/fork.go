package agent

import (
	"context"
	"errors"

	"github.com/troupe-dev/troupe/llm"
)

// ForkPlaceholder is the result each tool use of the forking message
// gets in a fork's conversation: every fork of one message sees the same
// bytes up to its own directive, so that the provider's prompt cache
// serves the whole shared prefix.
const ForkPlaceholder = "Fork started: processing in the background."

// ErrNotInToolRound is returned by Fork outside a tool call of the agent.
var ErrNotInToolRound = errors.New("agent: fork: the agent is not running a tool call")

// callerKey keys the Agent running a tool call in the call's context.
type callerKey struct{}

// Caller returns the agent whose tool call ctx belongs to.
func Caller(ctx context.Context) (*Agent, bool) {
	a, ok := ctx.Value(callerKey{}).(*Agent)
	return a, ok
}

// IsFork reports whether a was made from another agent's Fork.
func (a *Agent) IsFork() bool { return len(a.cfg.Opening) > 0 }

// Fork returns the configuration of a child that continues a's
// conversation byte for byte, for use from one of a's tool calls: the
// same model, system prompt (its volatile part as last sent), tools,
// limits and approver, and a's messages so far, the last being the
// assistant message whose tool uses are running; Opening answers each of
// them with ForkPlaceholder. The child's first Run prompt (its directive)
// follows those results in the same user message. Transcript and OnEvent
// are left for the caller to set.
func (a *Agent) Fork() (Config, error) {
	a.mu.Lock()
	msgs := cloneMessages(a.messages)
	volatile := a.volatile
	a.mu.Unlock()
	if len(msgs) == 0 || msgs[len(msgs)-1].Role != llm.RoleAssistant || len(msgs[len(msgs)-1].ToolUses()) == 0 {
		return Config{}, ErrNotInToolRound
	}
	var opening []llm.Block
	for _, u := range msgs[len(msgs)-1].ToolUses() {
		opening = append(opening, llm.ToolResult(u.ToolUseID, ForkPlaceholder, false))
	}
	cfg := a.cfg
	cfg.Transcript, cfg.OnEvent = nil, nil
	cfg.History, cfg.Opening = msgs, opening
	cfg.Environment = nil
	if a.cfg.Environment != nil {
		cfg.Environment = func(context.Context) string { return volatile }
	}
	return cfg, nil
}

// checkOpening checks a history that Opening answers: with the opening
// and a prompt as the next user message and any answer, it must be a
// conversation CheckHistory accepts.
func checkOpening(cfg Config) error {
	ms := append(cloneMessages(cfg.History),
		llm.Message{Role: llm.RoleUser, Content: append(append([]llm.Block(nil), cfg.Opening...), llm.Text("directive"))},
		llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("answer")}})
	_, err := CheckHistory(ms)
	return err
}
