// Package worktree gives each agent its own git worktree, so that agents
// working in parallel on one repository never overwrite each other's
// files: a Manager creates a worktree on a branch troupe/<team>/<name>
// from the repository's HEAD, in a folder beside the repository, and
// when the agent ends removes it (no changes) or keeps it and reports
// its branch, path and diffstat (changes), so that the lead can merge.
//
// The package runs the git program (os/exec): a worktree is git's own
// bookkeeping (.git/worktrees, refs, locks), which no library keeps as
// faithfully. A Manager is safe for concurrent use; it serializes its
// git commands that change the repository's worktree list and refs.
package worktree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/troupe-dev/troupe/internal/gitenv"
)

// Errors callers branch on.
var (
	// ErrNoGit: the git program is not installed (not on PATH).
	ErrNoGit = errors.New("git is not installed (no git on PATH)")
	// ErrNotRepo: the folder is not inside a git repository.
	ErrNotRepo = errors.New("not a git repository")
	// ErrNoCommit: the repository has no commit to branch from.
	ErrNoCommit = errors.New("the repository has no commit yet (a worktree starts from HEAD)")
	// ErrExists: the worktree's branch or folder exists already.
	ErrExists = errors.New("already exists")
)

// BranchPrefix starts every branch a Manager makes.
const BranchPrefix = "troupe/"

// Options configure Open.
type Options struct {
	// Root is the folder worktrees are made in; "" means a folder beside
	// the repository: <parent>/<repository>-worktrees.
	Root string
	// Git is the git program; "" means "git" on PATH.
	Git string
}

// Manager makes and ends the worktrees of one repository.
type Manager struct {
	repo string // the repository's top folder
	root string // where worktrees go
	git  string // the git program's path

	mu sync.Mutex // serializes worktree add/remove and branch changes
}

// Tree is one agent's worktree.
type Tree struct {
	Path   string // the worktree's folder
	Branch string // troupe/<team>/<name>
	Base   string // the commit it started from
}

// Open returns the Manager of the repository dir is in. It fails with
// ErrNoGit, ErrNotRepo or ErrNoCommit (wrapped, naming dir) and makes
// nothing.
func Open(ctx context.Context, dir string, opts Options) (*Manager, error) {
	git := opts.Git
	if git == "" {
		git = "git"
	}
	path, err := exec.LookPath(git)
	if err != nil {
		return nil, fmt.Errorf("worktrees for %s: %w", dir, ErrNoGit)
	}
	m := &Manager{git: path}
	top, err := m.run(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		var ge *gitError
		if errors.As(err, &ge) && strings.Contains(ge.stderr, "not a git repository") {
			return nil, fmt.Errorf("worktrees for %s: %w", dir, ErrNotRepo)
		}
		return nil, fmt.Errorf("worktrees for %s: %w", dir, err)
	}
	m.repo = filepath.Clean(top)
	if _, err := m.run(ctx, m.repo, "rev-parse", "--verify", "--quiet", "HEAD^{commit}"); err != nil {
		return nil, fmt.Errorf("worktrees for %s: %w", dir, ErrNoCommit)
	}
	m.root = opts.Root
	if m.root == "" {
		m.root = filepath.Join(filepath.Dir(m.repo), filepath.Base(m.repo)+"-worktrees")
	}
	if m.root, err = filepath.Abs(m.root); err != nil {
		return nil, err
	}
	return m, nil
}

// Repo returns the repository's top folder.
func (m *Manager) Repo() string { return m.repo }

// Root returns the folder worktrees are made in.
func (m *Manager) Root() string { return m.root }

// namePart is what a team or agent name may be in a branch and a path.
var namePart = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// Branch returns the branch of agent name in team.
func Branch(team, name string) string { return BranchPrefix + team + "/" + name }

// Create makes the worktree of agent name in team: branch
// troupe/<team>/<name> from HEAD, checked out in <root>/<team>/<name>.
// When the branch or the folder exists it fails with ErrExists; on any
// failure nothing is left behind.
func (m *Manager) Create(ctx context.Context, team, name string) (Tree, error) {
	for _, p := range []string{team, name} {
		if !namePart.MatchString(p) || strings.Contains(p, "..") || strings.HasSuffix(p, ".lock") || strings.HasSuffix(p, ".") {
			return Tree{}, fmt.Errorf("create worktree: %q cannot be part of a branch name (letters, digits, ., - and _)", p)
		}
	}
	return m.create(ctx, Tree{Path: filepath.Join(m.root, team, name), Branch: Branch(team, name)})
}

// SessionBranchPrefix starts the branch of a session's own worktree
// (CreateSession), as Claude Code's EnterWorktree names them.
const SessionBranchPrefix = "worktree/"

// CreateSession makes a worktree for a whole session to move into:
// branch worktree/<name> from HEAD, checked out in <root>/worktree/<name>.
// It fails as Create does.
func (m *Manager) CreateSession(ctx context.Context, name string) (Tree, error) {
	if !namePart.MatchString(name) || strings.Contains(name, "..") || strings.HasSuffix(name, ".lock") || strings.HasSuffix(name, ".") {
		return Tree{}, fmt.Errorf("create worktree: %q cannot be part of a branch name (letters, digits, ., - and _)", name)
	}
	return m.create(ctx, Tree{Path: filepath.Join(m.root, "worktree", name), Branch: SessionBranchPrefix + name})
}

// create makes t's branch from HEAD and checks it out in t.Path.
func (m *Manager) create(ctx context.Context, t Tree) (Tree, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	base, err := m.run(ctx, m.repo, "rev-parse", "HEAD")
	if err != nil {
		return Tree{}, fmt.Errorf("create worktree %s: %w", t.Branch, err)
	}
	t.Base = base
	if _, err := m.run(ctx, m.repo, "show-ref", "--verify", "--quiet", "refs/heads/"+t.Branch); err == nil {
		return Tree{}, fmt.Errorf("create worktree: branch %s %w (merge or delete it: git branch -D %s)", t.Branch, ErrExists, t.Branch)
	}
	if _, err := os.Lstat(t.Path); err == nil {
		return Tree{}, fmt.Errorf("create worktree: folder %s %w", t.Path, ErrExists)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return Tree{}, fmt.Errorf("create worktree: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(t.Path), 0o755); err != nil {
		return Tree{}, fmt.Errorf("create worktree: %w", err)
	}
	if _, err := m.run(ctx, m.repo, "worktree", "add", "--quiet", "-b", t.Branch, t.Path, base); err != nil {
		m.undoLocked(context.WithoutCancel(ctx), t)
		return Tree{}, fmt.Errorf("create worktree %s: %w", t.Branch, err)
	}
	return t, nil
}

// undoLocked removes what a failed Create may have left.
func (m *Manager) undoLocked(ctx context.Context, t Tree) {
	_, _ = m.run(ctx, m.repo, "worktree", "remove", "--force", t.Path)
	_ = os.RemoveAll(t.Path)
	_, _ = m.run(ctx, m.repo, "worktree", "prune")
	_, _ = m.run(ctx, m.repo, "branch", "-D", t.Branch)
	_ = os.Remove(filepath.Dir(t.Path)) // the team folder, when empty
}

// Changes describes what an agent changed in its worktree.
type Changes struct {
	Commits   int      // commits on the branch, or at HEAD, since Base (the more)
	Dirty     []string // uncommitted entries, as git status --porcelain prints them
	Untracked []string // files git does not track yet (also in Dirty)
	Diffstat  string   // git diff --stat of Base against the work tree, untracked files listed after it
	// Ignored are files the repository ignores (build output, .env):
	// not changes, and removed with the tree, but named in the Result.
	Ignored []string
}

// Empty reports whether nothing changed.
func (c Changes) Empty() bool { return c.Commits == 0 && len(c.Dirty) == 0 }

// Status reports what changed in t since it was made.
func (m *Manager) Status(ctx context.Context, t Tree) (Changes, error) {
	var c Changes
	out, err := m.run(ctx, t.Path, "status", "--porcelain", "--untracked-files=all")
	if err != nil {
		return c, fmt.Errorf("status of worktree %s: %w", t.Path, err)
	}
	for _, l := range strings.Split(out, "\n") {
		if l == "" {
			continue
		}
		c.Dirty = append(c.Dirty, l)
		if f, ok := strings.CutPrefix(l, "?? "); ok {
			c.Untracked = append(c.Untracked, f)
		}
	}
	// HEAD and the branch both: an agent that committed on its branch and
	// then checked out another commit (a detached HEAD at Base) left its
	// commits on the branch alone, which Remove would delete.
	for _, tip := range []string{"HEAD", "refs/heads/" + t.Branch} {
		n, err := m.run(ctx, t.Path, "rev-list", "--count", t.Base+".."+tip)
		if err != nil {
			if tip != "HEAD" {
				continue // the branch is gone (the agent deleted it): HEAD tells
			}
			return c, fmt.Errorf("status of worktree %s: %w", t.Path, err)
		}
		k, err := strconv.Atoi(n)
		if err != nil {
			return c, fmt.Errorf("status of worktree %s: rev-list gave %q", t.Path, n)
		}
		c.Commits = max(c.Commits, k)
	}
	if out, err := m.run(ctx, t.Path, "ls-files", "--others", "--ignored", "--exclude-standard", "--directory"); err == nil {
		for _, l := range strings.Split(out, "\n") {
			if l != "" {
				c.Ignored = append(c.Ignored, l)
			}
		}
	}
	if c.Empty() {
		return c, nil
	}
	stat, err := m.run(ctx, t.Path, "diff", "--stat", t.Base)
	if err != nil {
		return c, fmt.Errorf("diffstat of worktree %s: %w", t.Path, err)
	}
	var b strings.Builder
	b.WriteString(stat)
	if len(c.Untracked) > 0 {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, " %d untracked: %s", len(c.Untracked), strings.Join(c.Untracked, ", "))
	}
	c.Diffstat = b.String()
	return c, nil
}

// Result is what Finish did with a worktree.
type Result struct {
	Tree
	Removed bool    // it had no changes: the worktree and branch are gone
	Changes Changes // what is kept, when not Removed
}

// Report is the line for a notification: what was removed, or where the
// changes are kept and their diffstat.
func (r Result) Report() string {
	if r.Removed {
		s := fmt.Sprintf("Worktree %s had no changes: removed with its branch %s.", r.Path, r.Branch)
		if n := len(r.Changes.Ignored); n > 0 {
			shown := r.Changes.Ignored[:min(n, 10)]
			s += fmt.Sprintf(" It also held %d file(s) or folder(s) the repository ignores, removed with it: %s", n, strings.Join(shown, ", "))
			if n > len(shown) {
				s += ", ..."
			}
			s += "."
		}
		return s
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Changes kept on branch %s in worktree %s", r.Branch, r.Path)
	if r.Changes.Commits > 0 {
		fmt.Fprintf(&b, " (%d commit(s)", r.Changes.Commits)
		if n := len(r.Changes.Dirty); n > 0 {
			fmt.Fprintf(&b, ", %d uncommitted", n)
		}
		b.WriteString(")")
	} else {
		b.WriteString(" (uncommitted)")
	}
	fmt.Fprintf(&b, ":\n%s", r.Changes.Diffstat)
	return b.String()
}

// Finish ends t: without changes its worktree and branch are removed;
// with changes both are kept and the Result says what changed.
func (m *Manager) Finish(ctx context.Context, t Tree) (Result, error) {
	c, err := m.Status(ctx, t)
	if err != nil {
		return Result{Tree: t}, err
	}
	if !c.Empty() {
		return Result{Tree: t, Changes: c}, nil
	}
	if err := m.Remove(ctx, t); err != nil {
		return Result{Tree: t}, err
	}
	return Result{Tree: t, Removed: true, Changes: c}, nil
}

// Unmerged returns how many commits of t (its branch, and its HEAD) are
// on no other branch: the commits Remove would lose.
func (m *Manager) Unmerged(ctx context.Context, t Tree) (int, error) {
	most := 0
	for _, tip := range []string{"HEAD", "refs/heads/" + t.Branch} {
		n, err := m.run(ctx, t.Path, "rev-list", "--count", tip, "--not", "--exclude="+t.Branch, "--branches") // --exclude matches names below refs/heads/
		if err != nil {
			if tip != "HEAD" {
				continue // the branch is gone: HEAD tells
			}
			return 0, fmt.Errorf("commits of worktree %s: %w", t.Path, err)
		}
		k, err := strconv.Atoi(n)
		if err != nil {
			return 0, fmt.Errorf("commits of worktree %s: rev-list gave %q", t.Path, n)
		}
		most = max(most, k)
	}
	return most, nil
}

// Head returns the commit t's work tree is at.
func (m *Manager) Head(ctx context.Context, t Tree) (string, error) {
	h, err := m.run(ctx, t.Path, "rev-parse", "HEAD")
	if err != nil {
		return "", fmt.Errorf("head of worktree %s: %w", t.Path, err)
	}
	return h, nil
}

// Remove deletes t's worktree and branch whatever they hold.
func (m *Manager) Remove(ctx context.Context, t Tree) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, err := m.run(ctx, m.repo, "worktree", "remove", "--force", t.Path); err != nil {
		return fmt.Errorf("remove worktree %s: %w", t.Path, err)
	}
	if _, err := m.run(ctx, m.repo, "branch", "-D", t.Branch); err != nil {
		return fmt.Errorf("remove branch %s: %w", t.Branch, err)
	}
	_ = os.Remove(filepath.Dir(t.Path)) // the team folder, once empty
	return nil
}

// gitError is a git command that failed, with what it printed.
type gitError struct {
	args   []string
	stderr string
	err    error
}

func (e *gitError) Error() string {
	msg := strings.TrimSpace(e.stderr)
	if msg == "" {
		msg = e.err.Error()
	}
	return fmt.Sprintf("git %s: %s", strings.Join(e.args, " "), msg)
}

func (e *gitError) Unwrap() error { return e.err }

// run runs git in dir and returns its trimmed output.
func (m *Manager) run(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, m.git, args...)
	cmd.Dir = dir
	// A worktree's git must not pick up the caller's GIT_DIR or index,
	// nor run what the repository's configuration names (fsmonitor,
	// hooks: internal/gitenv).
	cmd.Env = gitenv.Env(append(cleanEnv(), "LC_ALL=C"))
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return "", context.Cause(ctx)
		}
		return "", &gitError{args: args, stderr: stderr.String(), err: err}
	}
	return strings.TrimRight(out.String(), "\n"), nil
}

// cleanEnv is the environment without the variables that would point git
// at another repository, work tree or index than the folder it runs in.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_PREFIX":
			continue
		}
		env = append(env, kv)
	}
	return env
}
