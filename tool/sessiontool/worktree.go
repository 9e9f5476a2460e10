package sessiontool

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/tool"
)

// The tools' names, as Claude Code's.
const (
	EnterWorktreeName = "EnterWorktree"
	ExitWorktreeName  = "ExitWorktree"
)

// Worktrees moves the session into a new git worktree of its project and
// back (session/kit.Workdir).
type Worktrees interface {
	// Enter makes a worktree on branch worktree/<name> ("" picks a name)
	// and moves the session's folder tools into it.
	Enter(ctx context.Context, name string) (Entered, error)
	// Exit moves the session back to its folder, keeping the worktree or
	// removing it with its branch; a removal that would lose work fails
	// with an *UnsavedError unless discard is set.
	Exit(ctx context.Context, remove, discard bool) (string, error)
}

// Entered is where Enter moved the session.
type Entered struct {
	Path   string // the worktree's top folder
	Branch string // worktree/<name>
	Dir    string // the session's folder in it (the same place below the top)
	Base   string // the commit it started from
}

// UnsavedError is a removal refused because the worktree holds work that
// would be lost.
type UnsavedError struct {
	Path, Branch string
	Dirty        []string // uncommitted entries, as git status --porcelain prints them
	Commits      int      // commits on no other branch
}

func (e *UnsavedError) Error() string {
	var what []string
	if n := len(e.Dirty); n > 0 {
		shown := e.Dirty[:min(n, 10)]
		s := fmt.Sprintf("%d uncommitted change(s) (%s", n, strings.Join(shown, "; "))
		if n > len(shown) {
			s += "; ..."
		}
		what = append(what, s+")")
	}
	if e.Commits > 0 {
		what = append(what, fmt.Sprintf("%d commit(s) on branch %s that no other branch has", e.Commits, e.Branch))
	}
	return fmt.Sprintf("worktree %s holds %s: not removed, and the session is still in it. Commit the changes and merge the branch, or leave with action \"keep\", or, to throw the work away, call again with discard_changes: true", e.Path, strings.Join(what, " and "))
}

// EnterWorktree is the EnterWorktree tool.
type EnterWorktree struct{ w Worktrees }

// ExitWorktree is the ExitWorktree tool.
type ExitWorktree struct{ w Worktrees }

// NewWorktreeTools returns EnterWorktree and ExitWorktree over w.
func NewWorktreeTools(w Worktrees) (*EnterWorktree, *ExitWorktree) {
	return &EnterWorktree{w}, &ExitWorktree{w}
}

var (
	_ tool.Tool = (*EnterWorktree)(nil)
	_ tool.Tool = (*ExitWorktree)(nil)
)

const enterDescription = `Move this session into a new git worktree of the project: a separate checkout on a new branch worktree/<name>, made from the current commit, so that your changes stay apart from the main checkout until they are merged. From then on Read, Write, Edit, Glob, Grep, NotebookEdit and Bash work in the worktree (relative paths resolve there). Use it when the person asks for a worktree or for work isolated from their checkout. Leave it with ExitWorktree.`

const exitDescription = `Move this session back out of the worktree EnterWorktree made, to the folder it started in.
- action "keep" leaves the worktree and its branch in place (to merge or review later).
- action "remove" deletes the worktree and its branch; it is refused while the worktree has uncommitted changes or commits that no other branch has, unless discard_changes is true. Only set discard_changes when the person agreed to throw that work away.`

// Spec implements tool.Tool.
func (*EnterWorktree) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: EnterWorktreeName, Description: enterDescription,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","pattern":"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$","description":"The worktree's name (branch worktree/<name>); a random one when omitted"}},"additionalProperties":false}`)}
}

// ReadOnly implements tool.Tool.
func (*EnterWorktree) ReadOnly(json.RawMessage) bool { return false }

// Run implements tool.Tool.
func (e *EnterWorktree) Run(ctx context.Context, c tool.Call) (tool.Result, error) {
	var in struct {
		Name string `json:"name"`
	}
	if res, ok := tool.Decode(EnterWorktreeName, c.Input, &in); !ok {
		return res, nil
	}
	got, err := e.w.Enter(ctx, in.Name)
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, context.Cause(ctx)
		}
		return tool.Errorf("%s: %v", EnterWorktreeName, err), nil
	}
	return tool.Result{Content: fmt.Sprintf("Entered worktree %s on the new branch %s (from commit %s). The session now works in %s: the file tools and Bash run there. Commit your work on the branch; leave with ExitWorktree (action keep or remove).",
		got.Path, got.Branch, short(got.Base), got.Dir)}, nil
}

func short(sha string) string { return sha[:min(len(sha), 12)] }

// Spec implements tool.Tool.
func (*ExitWorktree) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: ExitWorktreeName, Description: exitDescription,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"action":{"type":"string","enum":["keep","remove"],"description":"keep the worktree and its branch, or remove them"},"discard_changes":{"type":"boolean","description":"with remove: remove even when uncommitted changes or unmerged commits would be lost"}},"required":["action"],"additionalProperties":false}`)}
}

// ReadOnly implements tool.Tool.
func (*ExitWorktree) ReadOnly(json.RawMessage) bool { return false }

// Run implements tool.Tool.
func (x *ExitWorktree) Run(ctx context.Context, c tool.Call) (tool.Result, error) {
	var in struct {
		Action  string `json:"action"`
		Discard bool   `json:"discard_changes"`
	}
	if res, ok := tool.Decode(ExitWorktreeName, c.Input, &in); !ok {
		return res, nil
	}
	if in.Action != "keep" && in.Action != "remove" {
		return tool.Errorf("%s: invalid input: action %q: want keep or remove", ExitWorktreeName, in.Action), nil
	}
	if in.Discard && in.Action != "remove" {
		return tool.Errorf("%s: invalid input: discard_changes goes with action remove", ExitWorktreeName), nil
	}
	msg, err := x.w.Exit(ctx, in.Action == "remove", in.Discard)
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, context.Cause(ctx)
		}
		return tool.Errorf("%s: %v", ExitWorktreeName, err), nil
	}
	return tool.Result{Content: msg}, nil
}
