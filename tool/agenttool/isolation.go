package agenttool

import (
	"context"
)

// Isolation gives agents their own working folder: the Agent tool's
// isolation "worktree" (a git worktree per agent, package
// github.com/troupe-dev/troupe/worktree, wired by the caller).
type Isolation interface {
	// Isolate makes the folder of the agent called name. An error (not
	// a git repository, git missing, the branch exists) is shown to the
	// model; nothing is left half made.
	Isolate(ctx context.Context, name string) (Workspace, error)
}

// Workspace is one agent's own folder.
type Workspace struct {
	Dir string
	// End is called when the agent's run is over (and when the agent
	// could not start): it removes the folder when nothing changed and
	// returns the line for the result or notification (the branch, the
	// path and a diffstat when changes are kept) and whether the folder
	// is gone.
	End func(ctx context.Context) (note string, gone bool)
}

// end finishes ws, if any, and returns its note ("" without one).
func (ws *Workspace) end(ctx context.Context) (string, bool) {
	if ws == nil || ws.End == nil {
		return "", false
	}
	return ws.End(context.WithoutCancel(ctx))
}

// withNote appends a workspace note to text.
func withNote(text, note string) string {
	if note == "" {
		return text
	}
	return text + "\n\n" + note
}
