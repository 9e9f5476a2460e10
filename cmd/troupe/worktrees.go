package main

import (
	"github.com/troupe-dev/troupe/permission/settings"
)

// worktreeFlags are --worktrees and --worktree-dir, and --fork-subagents.
type worktreeFlags struct {
	all  bool
	root string
	fork bool
}

func addWorktreeFlags(f interface {
	BoolVar(*bool, string, bool, string)
	StringVar(*string, string, string, string)
}) *worktreeFlags {
	w := &worktreeFlags{}
	f.BoolVar(&w.all, "worktrees", false, "with --agent-teams: every teammate works in its own git worktree, on a branch troupe/<team>/<name> from HEAD (the Agent tool's isolation \"worktree\" for all of them)")
	f.BoolVar(&w.fork, "fork-subagents", false, "an Agent call without subagent_type forks the lead: the fork starts with the lead's whole conversation, system prompt and tools (the provider's prompt cache serves that prefix); off in coordinator mode")
	f.StringVar(&w.root, "worktree-dir", "", "where agents' git worktrees go (default: <repository>-worktrees beside the repository)")
	return w
}

// get returns the flags, zero when they were not registered (a headless
// configuration built in code).
func (w *worktreeFlags) get() worktreeFlags {
	if w == nil {
		return worktreeFlags{}
	}
	return *w
}

// forkSubagents reports whether an Agent call without subagent_type forks
// the lead: --fork-subagents, else the settings' forkSubagents.
func (a *app) forkSubagents(h *headless, cwd string) (bool, error) {
	if h.teams.trees.get().fork {
		return true, nil
	}
	home, err := a.Home()
	if err != nil {
		return false, err
	}
	on, _, err := settings.Key[bool](settings.Files(home, cwd), "forkSubagents")
	return on, err
}
