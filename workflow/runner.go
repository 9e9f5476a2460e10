package workflow

import (
	"context"
	"encoding/json"
)

// Runner runs one agent: the engine's only way to do work. An
// implementation runs the agent to its end and returns its final text;
// it must return when ctx ends (with ctx's cause or an error wrapping it).
// RunAgent is called from several goroutines at once (at most
// Options.Concurrency).
type Runner interface {
	RunAgent(ctx context.Context, req Request) (Reply, error)
}

// RunnerFunc adapts a function to Runner.
type RunnerFunc func(ctx context.Context, req Request) (Reply, error)

// RunAgent implements Runner.
func (f RunnerFunc) RunAgent(ctx context.Context, req Request) (Reply, error) { return f(ctx, req) }

// Request is one agent() call as the runner sees it.
type Request struct {
	// Index is the call's position in the run (0 for the first agent()
	// call), and Attempt 1, or 2 for the retry after an answer that did
	// not validate against Schema.
	Index, Attempt int
	// Workflow is the script's meta.name.
	Workflow string
	// Prompt is the text the agent gets: the script's prompt, plus, with
	// a schema, the instruction to answer with JSON that validates (and on
	// the retry, why the first answer did not).
	Prompt string
	// Label, Phase, Model, AgentType, Isolation ("", "worktree" or
	// "remote"), Tools (when not nil, the only tools the agent may have),
	// Labels (remote workers) and Cwd are the call's options.
	Label, Phase, Model, AgentType, Isolation, Cwd string
	Tools, Labels                                  []string
	// Schema is the JSON Schema of the answer, nil without one.
	Schema json.RawMessage
	// Activity, when not nil, is what the runner calls with the agent's
	// progress (a tool use, tokens so far); it is safe to call from any
	// goroutine.
	Activity func(Activity)
}

// Activity is an agent's progress.
type Activity struct {
	Text   string // "Reading a.go", "Running go test"
	Tokens int64  // total so far
	// AgentID is the agent's id, which names its transcript in the
	// session ("" when the runner keeps none).
	AgentID string
}

// Reply is an agent's outcome.
type Reply struct {
	Text  string
	Usage Usage
}

// Usage is what agents spent.
type Usage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	ToolUses     int   `json:"tool_uses,omitempty"`
}

// Total returns the tokens of u.
func (u Usage) Total() int64 { return u.InputTokens + u.OutputTokens }

// Add returns u plus v.
func (u Usage) Add(v Usage) Usage {
	return Usage{u.InputTokens + v.InputTokens, u.OutputTokens + v.OutputTokens, u.ToolUses + v.ToolUses}
}
