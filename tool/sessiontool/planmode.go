// Package sessiontool holds the tools with which a lead agent moves its
// whole session: EnterPlanMode (into plan mode, with the person's
// approval) and EnterWorktree / ExitWorktree (into a git worktree of the
// project and back). Sub-agents never get them (agenttool.Disallowed).
package sessiontool

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/tool"
)

// EnterPlanModeName is the tool's name, as Claude Code's.
const EnterPlanModeName = "EnterPlanMode"

// Modes is the session's permission mode, read and changed.
type Modes interface {
	Mode() permission.Mode
	SetMode(mode string) error
}

// PlanMode is the EnterPlanMode tool. It is not read-only, so that the
// permission layer asks the person (the TUI's permission dialog, a
// --permission-prompt-command) unless a rule allows or denies
// EnterPlanMode; troupe -p without either refuses with the way to allow
// it. Once allowed, it switches the session to plan mode.
type PlanMode struct{ modes Modes }

// NewPlanMode returns the EnterPlanMode tool over the session's modes.
func NewPlanMode(m Modes) *PlanMode { return &PlanMode{modes: m} }

var _ tool.Tool = (*PlanMode)(nil)

const planModeDescription = `Ask to switch the session to plan mode before a change that deserves a plan: a new feature with design choices, a change across many files, or a task whose approach is unclear. The person approves the switch. In plan mode you can read and search but not write files or run commands that change anything; explore, then present your plan and end your turn; the person leaves plan mode when they approve it.

Do not use it for small, clear tasks (a typo, a one-line fix), or to research without a change in view.`

// Spec implements tool.Tool.
func (*PlanMode) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: EnterPlanModeName, Description: planModeDescription,
		InputSchema: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)}
}

// ReadOnly implements tool.Tool: the switch needs approval.
func (*PlanMode) ReadOnly(json.RawMessage) bool { return false }

// Run implements tool.Tool.
func (p *PlanMode) Run(_ context.Context, c tool.Call) (tool.Result, error) {
	var in struct{}
	if res, ok := tool.Decode(EnterPlanModeName, c.Input, &in); !ok {
		return res, nil
	}
	if p.modes.Mode() == permission.ModePlan {
		return tool.Result{Content: "The session is already in plan mode. Explore, then present your plan and end your turn."}, nil
	}
	prev := p.modes.Mode()
	if err := p.modes.SetMode(string(permission.ModePlan)); err != nil {
		return tool.Errorf("%s: cannot switch to plan mode: %v", EnterPlanModeName, err), nil
	}
	return tool.Result{Content: fmt.Sprintf(`Entered plan mode (from %s). Until the person approves your plan:
- read, search and think; do not write files or run commands that change anything (they are refused);
- when the plan is ready, present it (what you will change, in which files, in what order, and how you will check it) and end your turn;
- the person leaves plan mode when they approve it (shift+tab in the TUI), and you then carry it out.`, prev)}, nil
}
