package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/permission/approve"
	"github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/tool"
	"github.com/troupe-dev/troupe/tool/bash"
	"github.com/troupe-dev/troupe/tool/fs"
	tasktool "github.com/troupe-dev/troupe/tool/task"
	"github.com/troupe-dev/troupe/worktree"

	agenttool "github.com/troupe-dev/troupe/tool/agent"
)

// SubAgentWorktrees is the <team> part of the branch of a sub-agent's
// worktree (troupe/agents/<name>): sub-agents belong to no team.
const SubAgentWorktrees = "agents"

// worktrees implements agenttool.Isolation with a git worktree per agent
// of the repository cwd is in, opened at the first use (so that a
// session outside a repository only fails the calls that ask for one).
type worktrees struct {
	cwd, team, root string

	mu sync.Mutex        // guards m
	m  *worktree.Manager // nil until opened
}

var _ agenttool.Isolation = (*worktrees)(nil)

func (w *worktrees) manager(ctx context.Context) (*worktree.Manager, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m != nil {
		return w.m, nil
	}
	m, err := worktree.Open(ctx, w.cwd, worktree.Options{Root: w.root})
	if err != nil {
		return nil, err
	}
	w.m = m
	return m, nil
}

// Isolate implements agenttool.Isolation: the agent works in the folder
// of its worktree that matches cwd's place in the repository.
func (w *worktrees) Isolate(ctx context.Context, name string) (agenttool.Workspace, error) {
	m, err := w.manager(ctx)
	if err != nil {
		return agenttool.Workspace{}, err
	}
	t, err := m.Create(ctx, w.team, name)
	if err != nil {
		return agenttool.Workspace{}, err
	}
	dir := t.Path
	if rel, err := filepath.Rel(m.Repo(), w.cwd); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
		dir = filepath.Join(t.Path, rel)
	}
	return agenttool.Workspace{Dir: dir, End: func(ctx context.Context) (string, bool) {
		res, err := m.Finish(ctx, t)
		if err != nil {
			return fmt.Sprintf("Worktree %s (branch %s) could not be checked for changes and is kept: %v", t.Path, t.Branch, err), false
		}
		return res.Report(), res.Removed
	}}, nil
}

// toolsIn returns tools rebuilt for an agent working in dir (its own
// worktree): the file tools and Bash rooted there and judged by an
// approver whose working folder is dir; the other tools as they are.
func toolsIn(dir string, tools *tool.Registry, ap agent.Approver, reg *task.Registry, agentID string) (*tool.Registry, agent.Approver, error) {
	ap = approverIn(ap, dir)
	local := map[string]tool.Tool{}
	for _, t := range fs.All(fileConfig(dir, ap)) {
		local[t.Spec().Name] = t
	}
	local["Bash"] = bash.New(bash.Config{Dir: dir,
		Background: tasktool.BashBackground(reg, tasktool.BashOptions{AgentID: agentID, Dir: dir})})
	var ts []tool.Tool
	for _, name := range tools.Names() {
		t, _ := tools.Get(name)
		if l, ok := local[name]; ok {
			t = l
		}
		ts = append(ts, t)
	}
	r, err := tool.NewRegistry(ts...)
	return r, ap, err
}

// approverIn returns ap for an agent whose working folder is dir: the
// same rules and mode, with paths judged against dir. An approver of
// another kind is kept as it is.
func approverIn(ap agent.Approver, dir string) agent.Approver {
	if a, ok := ap.(*approve.Approver); ok && a != nil {
		c := *a
		c.Cwd = dir
		return &c
	}
	return ap
}

// worktreeNote tells an agent in its own worktree where it works.
func worktreeNote(dir string) string {
	return "\n\n# Your worktree\n\nYou work in your own git worktree, " + dir + ", on its own branch: other agents cannot see or overwrite your changes there, and you must not change files outside it. Commit your work on the branch when it is done (git add, git commit); uncommitted changes are kept too."
}
