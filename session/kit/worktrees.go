package kit

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/troupe-dev/troupe/tool/agenttool"
	"github.com/troupe-dev/troupe/tool/tasktool"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/permission/approve"
	"github.com/troupe-dev/troupe/swarm"
	"github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/tool"
	"github.com/troupe-dev/troupe/tool/bash"
	"github.com/troupe-dev/troupe/tool/filetool"
	"github.com/troupe-dev/troupe/worktree"
)

// SubAgentWorktrees is the <team> part of the branch of a sub-agent's
// worktree (troupe/agents/<name>): sub-agents belong to no team.
const SubAgentWorktrees = "agents"

// CoordinatorWorktrees is the <team> part of a coordinator's workers'
// worktree branches (troupe/workers/<id>).
const CoordinatorWorktrees = "workers"

// Worktrees implements agenttool.Isolation with a git worktree per agent
// of the repository cwd is in, opened at the first use (so that a
// session outside a repository only fails the calls that ask for one).
type Worktrees struct {
	cwd, team, root string

	mu sync.Mutex        // guards m
	m  *worktree.Manager // nil until opened
}

func (w *Worktrees) manager(ctx context.Context) (*worktree.Manager, error) {
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
func (w *Worktrees) Isolate(ctx context.Context, name string) (agenttool.Workspace, error) {
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
	for _, t := range append(filetool.All(FileConfig(dir, ap)), filetool.NewNotebookEdit(FileConfig(dir, ap))) {
		local[t.Spec().Name] = t
	}
	local["Bash"] = bash.New(bash.Config{Dir: dir,
		Background: tasktool.BashBackground(reg, tasktool.BashOptions{AgentID: agentID, Dir: dir})})
	var ts []tool.Tool
	for _, name := range tools.Names() {
		t, _ := tools.Get(name)
		if l, ok := local[name]; ok {
			t = tool.DeferredLike(l, t)
		}
		ts = append(ts, t)
	}
	r, err := tool.NewRegistry(ts...)
	return r, ap, err
}

// approverIn returns ap for an agent whose working folder is dir: the
// same rules and mode, with paths judged against dir, and the rules
// anchored in the main checkout holding in dir's worktree too
// (FollowWorktree). An approver of another kind is kept as it is.
func approverIn(ap agent.Approver, dir string) agent.Approver {
	if a, ok := ap.(*approve.Approver); ok && a != nil {
		c := *a
		c.Cwd = dir
		FollowWorktree(&c)
		return &c
	}
	return ap
}

// FollowWorktree makes the path rules of a that are anchored in a
// repository's main checkout hold at the same place in the linked
// worktree a.Cwd is in, if it is in one (an agent's own worktree): a
// project's Read(./secret.txt) deny rule then keeps the worktree's
// secret.txt too (permission.Policy.Follow).
func FollowWorktree(a *approve.Approver) {
	if main, tree, ok := worktree.Checkout(a.Cwd); ok {
		a.Policy = a.Policy.Follow(main, tree)
	}
}

// WorktreeNote tells an agent in its own worktree where it works.
func WorktreeNote(dir string) string {
	return "\n\n# Your worktree\n\nYou work in your own git worktree, " + dir + ", on its own branch: other agents cannot see or overwrite your changes there, and you must not change files outside it. Commit your work on the branch when it is done (git add, git commit); uncommitted changes are kept too."
}

// TeamWorktrees keeps the worktrees of a lead's teammates (isolation
// "worktree" on the Agent tool, or --worktrees for all of them): made at
// spawn on troupe/<team>/<name>, finished when the teammate ends (the lead
// is told the branch, path and diffstat of what is kept), and at
// TeamDelete clean ones are removed and dirty ones listed.
type TeamWorktrees struct {
	all     bool // --worktrees
	open    *Worktrees
	deliver func(string) // to the lead, as input

	mu    sync.Mutex
	trees map[string]worktree.Tree // by member name; guarded by mu
}

func NewTeamWorktrees(all bool, cwd, root string, deliver func(string)) *TeamWorktrees {
	return &TeamWorktrees{all: all, open: &Worktrees{cwd: cwd, root: root}, deliver: deliver, trees: map[string]worktree.Tree{}}
}

// IsolatedTeammates spawns teammates, each in its own worktree when the
// call asks for isolation "worktree" or --worktrees is set.
type IsolatedTeammates struct {
	Inner agenttool.Teammates
	Team  func() string // the lead's team
	Trees *TeamWorktrees
}

// SpawnTeammate implements agenttool.Teammates.
func (s IsolatedTeammates) SpawnTeammate(ctx context.Context, r agenttool.TeammateRequest) (agenttool.TeammateInfo, error) {
	if r.Isolation != "worktree" && !s.Trees.all {
		return s.Inner.SpawnTeammate(ctx, r)
	}
	teamName := s.Team()
	if teamName == "" {
		return agenttool.TeammateInfo{}, fmt.Errorf("you lead no team yet: create one with TeamCreate first")
	}
	m, err := s.Trees.open.manager(ctx)
	if err != nil {
		return agenttool.TeammateInfo{}, fmt.Errorf("worktree for %s: %w", r.Name, err)
	}
	t, err := m.Create(ctx, teamName, r.Name)
	if err != nil {
		return agenttool.TeammateInfo{}, err
	}
	r.Dir = t.Path
	if rel, err := filepath.Rel(m.Repo(), s.Trees.open.cwd); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
		r.Dir = filepath.Join(t.Path, rel)
	}
	info, err := s.Inner.SpawnTeammate(ctx, r)
	if err != nil {
		_ = m.Remove(context.WithoutCancel(ctx), t)
		return info, err
	}
	s.Trees.mu.Lock()
	s.Trees.trees[r.Name] = t
	s.Trees.mu.Unlock()
	return info, nil
}

// take removes and returns the worktree of member name.
func (w *TeamWorktrees) take(name string) (worktree.Tree, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	t, ok := w.trees[name]
	delete(w.trees, name)
	return t, ok
}

// OnEvent passes e on to next and finishes the worktree of a teammate
// that ended, telling the lead what is kept.
func (w *TeamWorktrees) OnEvent(next func(swarm.Event)) func(swarm.Event) {
	return func(e swarm.Event) {
		if next != nil {
			next(e)
		}
		if e.Kind != swarm.EventExit && e.Kind != swarm.EventDead {
			return
		}
		t, ok := w.take(e.Agent)
		if !ok {
			return
		}
		m := w.open.m // set: the tree was made through it
		res, err := m.Finish(context.Background(), t)
		switch {
		case err != nil:
			w.deliver(fmt.Sprintf("Teammate %s ended; its worktree %s (branch %s) is kept: %v", e.Agent, t.Path, t.Branch, err))
		case !res.Removed:
			w.deliver(fmt.Sprintf("Teammate %s ended. %s", e.Agent, res.Report()))
		}
	}
}

// afterDelete finishes the worktrees left when the team is deleted:
// clean ones are removed, dirty ones kept and listed in the returned note.
func (w *TeamWorktrees) afterDelete(ctx context.Context) string {
	w.mu.Lock()
	trees := w.trees
	w.trees = map[string]worktree.Tree{}
	w.mu.Unlock()
	if len(trees) == 0 {
		return ""
	}
	var removed, kept []string
	for _, name := range slices.Sorted(maps.Keys(trees)) {
		t := trees[name]
		res, err := w.open.m.Finish(ctx, t)
		switch {
		case err != nil:
			kept = append(kept, fmt.Sprintf("%s: branch %s in %s (could not check it: %v)", name, t.Branch, t.Path, err))
		case res.Removed:
			removed = append(removed, name)
		default:
			kept = append(kept, fmt.Sprintf("%s: %s", name, res.Report()))
		}
	}
	var b strings.Builder
	if len(removed) > 0 {
		fmt.Fprintf(&b, " Worktrees without changes removed: %s.", strings.Join(removed, ", "))
	}
	if len(kept) > 0 {
		fmt.Fprintf(&b, " Worktrees with changes kept for you to merge:\n%s", strings.Join(kept, "\n"))
	}
	return b.String()
}

// DeletingLead is the lead's team tools' Lead with the worktrees: the
// TeamDelete result also says which worktrees went and which are kept.
type DeletingLead struct {
	*swarm.Lead
	Trees *TeamWorktrees
}

// DeleteTeamNote implements the team tools' optional note after a
// TeamDelete.
func (d DeletingLead) DeleteTeamNote(ctx context.Context) string { return d.Trees.afterDelete(ctx) }

// IdleNote is the line of a teammate's idle notification about its
// worktree: where its changes are, with a diffstat; "" without a worktree
// or without changes.
func (w *TeamWorktrees) IdleNote(name string) string {
	w.mu.Lock()
	t, ok := w.trees[name]
	w.mu.Unlock()
	if !ok || w.open.m == nil {
		return ""
	}
	c, err := w.open.m.Status(context.Background(), t)
	if err != nil || c.Empty() {
		return ""
	}
	return worktree.Result{Tree: t, Changes: c}.Report()
}
