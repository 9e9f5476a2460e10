package kit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/swarm"
	"github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/tool"
	"github.com/troupe-dev/troupe/tool/bash"
	"github.com/troupe-dev/troupe/tool/filetool"
	"github.com/troupe-dev/troupe/tool/sessiontool"
	"github.com/troupe-dev/troupe/tool/tasktool"
	"github.com/troupe-dev/troupe/worktree"
)

// FolderTools are the tools whose working folder is the session's: they
// follow the lead into a worktree (Workdir).
var FolderTools = []string{"Read", "Write", "Edit", "Glob", "Grep", "NotebookEdit", "Bash"}

// Workdir is the working folder of a lead that may move into a new git
// worktree of its project and back (EnterWorktree, ExitWorktree): the
// lead's folder tools (FolderTools, wrapped by Follow) run in it, and its
// approver judges calls against it. Sub-agents and teammates keep the
// folder they started in. It is safe for concurrent use.
type Workdir struct {
	home  string // where the session started
	root  string // where worktrees go; "" beside the repository
	build func(dir string) map[string]tool.Tool

	mu       sync.Mutex
	dir      string                          // guarded by mu: the folder now
	tree     *worktree.Tree                  // guarded by mu: the worktree the session is in, nil at home
	mgr      *worktree.Manager               // guarded by mu
	moving   bool                            // guarded by mu: an Enter or Exit is under way
	tools    map[string]map[string]tool.Tool // guarded by mu: the folder tools by folder, by name
	approver *swarm.Approver                 // guarded by mu
}

var _ sessiontool.Worktrees = (*Workdir)(nil)

// NewWorkdir returns the working folder of a session started in home,
// making worktrees in root ("" beside the repository); build returns the
// folder tools rooted at a folder, by name.
func NewWorkdir(home, root string, build func(dir string) map[string]tool.Tool) *Workdir {
	return &Workdir{home: home, root: root, build: build, dir: home, tools: map[string]map[string]tool.Tool{}}
}

// SetApprover gives w the lead's approver, which it moves along.
func (w *Workdir) SetApprover(a *swarm.Approver) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.approver = a
}

// Dir returns the folder the session works in now.
func (w *Workdir) Dir() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.dir
}

// Follow returns tools with the folder tools among them replaced by ones
// that run in w's folder of the moment (keeping their deferral).
func (w *Workdir) Follow(tools []tool.Tool) []tool.Tool {
	out := make([]tool.Tool, len(tools))
	for i, t := range tools {
		out[i] = t
		if name := t.Spec().Name; containsName(FolderTools, name) {
			out[i] = tool.DeferredLike(follower{w: w, name: name, spec: t.Spec()}, t)
		}
	}
	return out
}

func containsName(list []string, name string) bool {
	for _, n := range list {
		if n == name {
			return true
		}
	}
	return false
}

// current returns the tool name rooted at the folder of the moment.
func (w *Workdir) current(name string) tool.Tool {
	w.mu.Lock()
	dir := w.dir
	set, ok := w.tools[dir]
	w.mu.Unlock()
	if !ok {
		set = w.build(dir)
		w.mu.Lock()
		if have, ok := w.tools[dir]; ok {
			set = have
		} else {
			w.tools[dir] = set
		}
		w.mu.Unlock()
	}
	return set[name]
}

// follower is a folder tool that runs in the Workdir's folder of the
// moment.
type follower struct {
	w    *Workdir
	name string
	spec llm.ToolSpec
}

func (f follower) Spec() llm.ToolSpec { return f.spec }

func (f follower) ReadOnly(in json.RawMessage) bool {
	t := f.w.current(f.name)
	return t != nil && t.ReadOnly(in)
}

func (f follower) Run(ctx context.Context, c tool.Call) (tool.Result, error) {
	t := f.w.current(f.name)
	if t == nil {
		return tool.Errorf("%s is not available in %s", f.name, f.w.Dir()), nil
	}
	return t.Run(ctx, c)
}

// begin marks a move under way; it fails while another is.
func (w *Workdir) begin() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.moving {
		return errors.New("another EnterWorktree or ExitWorktree is under way")
	}
	w.moving = true
	return nil
}

func (w *Workdir) end() {
	w.mu.Lock()
	w.moving = false
	w.mu.Unlock()
}

// Enter implements sessiontool.Worktrees: a new worktree of the project
// on branch worktree/<name> (a random name when name is ""), and the
// session moved into it, at the same place below the repository's top.
func (w *Workdir) Enter(ctx context.Context, name string) (sessiontool.Entered, error) {
	if err := w.begin(); err != nil {
		return sessiontool.Entered{}, err
	}
	defer w.end()
	w.mu.Lock()
	in := w.tree
	w.mu.Unlock()
	if in != nil {
		return sessiontool.Entered{}, fmt.Errorf("the session is already in worktree %s (branch %s); leave it with ExitWorktree first", in.Path, in.Branch)
	}
	if name == "" {
		var b [3]byte
		_, _ = rand.Read(b[:])
		name = "session-" + hex.EncodeToString(b[:])
	}
	mgr, err := worktree.Open(ctx, w.home, worktree.Options{Root: w.root})
	if err != nil {
		return sessiontool.Entered{}, err
	}
	t, err := mgr.CreateSession(ctx, name)
	if err != nil {
		return sessiontool.Entered{}, err
	}
	dir := t.Path
	if rel, err := filepath.Rel(mgr.Repo(), w.home); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
		dir = filepath.Join(t.Path, rel)
	}
	w.mu.Lock()
	w.dir, w.tree, w.mgr = dir, &t, mgr
	ap := w.approver
	w.mu.Unlock()
	if ap != nil {
		repo := mgr.Repo()
		ap.Chdir(dir, func(p permission.Policy) permission.Policy { return p.Follow(repo, t.Path) })
	}
	return sessiontool.Entered{Path: t.Path, Branch: t.Branch, Dir: dir, Base: t.Base}, nil
}

// Exit implements sessiontool.Worktrees: the session back in its own
// folder, the worktree kept, or removed with its branch. A removal is
// refused while the worktree has uncommitted changes or commits on no
// other branch, unless discard is set; then what was thrown away is said.
func (w *Workdir) Exit(ctx context.Context, remove, discard bool) (string, error) {
	if err := w.begin(); err != nil {
		return "", err
	}
	defer w.end()
	w.mu.Lock()
	t, mgr := w.tree, w.mgr
	w.mu.Unlock()
	if t == nil {
		return "", errors.New("the session is not in a worktree: EnterWorktree made none, or it was left already")
	}
	back := func() {
		w.mu.Lock()
		delete(w.tools, w.dir) // the worktree's tools are not needed again
		w.dir, w.tree, w.mgr = w.home, nil, nil
		ap := w.approver
		w.mu.Unlock()
		if ap != nil {
			ap.Chdir(w.home, nil)
		}
	}
	if !remove {
		c, err := mgr.Status(ctx, *t)
		back()
		note := ""
		switch {
		case err != nil:
			note = fmt.Sprintf(" (its changes could not be read: %v)", err)
		case !c.Empty():
			note = fmt.Sprintf(" (%d commit(s), %d uncommitted entr(ies))", c.Commits, len(c.Dirty))
		}
		return fmt.Sprintf("Back in %s. Worktree %s is kept on branch %s%s; merge the branch or enter it again with git worktree.", w.home, t.Path, t.Branch, note), nil
	}
	c, err := mgr.Status(ctx, *t)
	if err != nil {
		return "", err
	}
	unmerged, err := mgr.Unmerged(ctx, *t)
	if err != nil {
		return "", err
	}
	head, _ := mgr.Head(ctx, *t)
	if (len(c.Dirty) > 0 || unmerged > 0) && !discard {
		return "", &sessiontool.UnsavedError{Path: t.Path, Branch: t.Branch, Dirty: c.Dirty, Commits: unmerged}
	}
	if err := mgr.Remove(ctx, *t); err != nil {
		return "", err
	}
	back()
	msg := fmt.Sprintf("Back in %s. Removed worktree %s and its branch %s.", w.home, t.Path, t.Branch)
	if len(c.Dirty) > 0 {
		msg += fmt.Sprintf(" Discarded %d uncommitted entr(ies).", len(c.Dirty))
	}
	if unmerged > 0 {
		msg += fmt.Sprintf(" Discarded %d commit(s) on no other branch, tip %s (until git prunes it: git branch %s %s).", unmerged, head, t.Branch, head)
	}
	return msg, nil
}

// FolderToolsIn returns the folder tools (FolderTools) of a lead working
// in dir whose calls ap approves (judged against dir, with the main
// checkout's path rules holding in dir's worktree), by name; Bash's
// background shells go to reg.
func FolderToolsIn(dir string, ap agent.Approver, reg *task.Registry) map[string]tool.Tool {
	ap = approverIn(ap, dir)
	out := map[string]tool.Tool{}
	cfg := FileConfig(dir, ap)
	for _, t := range append(filetool.All(cfg), filetool.NewNotebookEdit(cfg)) {
		out[t.Spec().Name] = t
	}
	out["Bash"] = bash.New(bash.Config{Dir: dir, Background: tasktool.BashBackground(reg, tasktool.BashOptions{Dir: dir})})
	return out
}
