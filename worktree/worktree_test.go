package worktree_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/worktree"
)

// needGit skips without git, unless CI=true (where .ci/run installs it).
func needGit(tb testing.TB) {
	tb.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatal("git is not installed; CI must have it")
		}
		tb.Skip("git is not installed")
	}
}

// git runs git in dir with a fixed identity.
func git(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// repo makes a repository with one commit of main.go under a fresh
// folder and returns its path.
func repo(tb testing.TB) string {
	tb.Helper()
	needGit(tb)
	dir := filepath.Join(tb.TempDir(), "proj")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	git(tb, dir, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
	git(tb, dir, "add", ".")
	git(tb, dir, "commit", "-q", "-m", "first")
	return dir
}

func TestTwoAgentsSameFile(t *testing.T) {
	dir := repo(t)
	m, err := worktree.Open(t.Context(), filepath.Join(dir), worktree.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(filepath.Dir(dir), "proj-worktrees"); m.Root() != want {
		t.Errorf("Root = %s; want %s (beside the repository)", m.Root(), want)
	}
	ann, err := m.Create(t.Context(), "t1", "ann")
	if err != nil {
		t.Fatal(err)
	}
	bob, err := m.Create(t.Context(), "t1", "bob")
	if err != nil {
		t.Fatal(err)
	}
	cid, err := m.Create(t.Context(), "t1", "cid")
	if err != nil {
		t.Fatal(err)
	}
	if ann.Branch != "troupe/t1/ann" || ann.Path != filepath.Join(m.Root(), "t1", "ann") {
		t.Errorf("ann = %+v", ann)
	}
	// ann and bob edit the same file, each in its own tree; bob commits.
	if err := os.WriteFile(filepath.Join(ann.Path, "main.go"), []byte("package main\n\n// ann\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bob.Path, "main.go"), []byte("package main\n\n// bob\n// bob again\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bob.Path, "new.txt"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, bob.Path, "add", "main.go")
	git(t, bob.Path, "commit", "-q", "-m", "bob's change")
	for _, tc := range []struct{ path, want string }{{ann.Path, "// ann"}, {bob.Path, "// bob"}, {dir, "func main"}} {
		b, _ := os.ReadFile(filepath.Join(tc.path, "main.go"))
		if !strings.Contains(string(b), tc.want) || (tc.path == dir && strings.Contains(string(b), "//")) {
			t.Errorf("%s/main.go = %q; want its own version", tc.path, b)
		}
	}

	// cid changed nothing: removed with its branch.
	res, err := m.Finish(t.Context(), cid)
	if err != nil || !res.Removed {
		t.Fatalf("Finish(cid) = %+v, %v; want removed", res, err)
	}
	if _, err := os.Stat(cid.Path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("cid's folder is still there: %v", err)
	}
	if out := git(t, dir, "branch", "--list", "troupe/t1/cid"); out != "" {
		t.Errorf("cid's branch is still there: %q", out)
	}
	// ann and bob changed things: kept and reported.
	res, err = m.Finish(t.Context(), ann)
	if err != nil || res.Removed || res.Changes.Commits != 0 || len(res.Changes.Dirty) != 1 {
		t.Fatalf("Finish(ann) = %+v, %v; want kept with one uncommitted change", res, err)
	}
	if r := res.Report(); !strings.Contains(r, "branch troupe/t1/ann") || !strings.Contains(r, ann.Path) || !strings.Contains(r, "main.go | 1 +") {
		t.Errorf("ann's report = %q", r)
	}
	res, err = m.Finish(t.Context(), bob)
	if err != nil || res.Removed || res.Changes.Commits != 1 {
		t.Fatalf("Finish(bob) = %+v, %v; want kept with one commit", res, err)
	}
	if r := res.Report(); !strings.Contains(r, "1 commit(s), 1 uncommitted") || !strings.Contains(r, "main.go | 2 ++") || !strings.Contains(r, "1 untracked: new.txt") {
		t.Errorf("bob's report = %q", r)
	}
	if _, err := os.Stat(filepath.Join(bob.Path, "new.txt")); err != nil {
		t.Errorf("bob's tree lost a file: %v", err)
	}
	// A name in use: refused, the existing tree untouched.
	if _, err := m.Create(t.Context(), "t1", "ann"); !errors.Is(err, worktree.ErrExists) {
		t.Errorf("Create(ann) again = %v; want ErrExists", err)
	}
	if b, _ := os.ReadFile(filepath.Join(ann.Path, "main.go")); !strings.Contains(string(b), "// ann") {
		t.Error("a refused Create changed the existing tree")
	}
	if err := m.Remove(t.Context(), ann); err != nil {
		t.Fatal(err)
	}
	if out := git(t, dir, "worktree", "list"); strings.Contains(out, "ann") || !strings.Contains(out, "bob") {
		t.Errorf("worktree list after removing ann:\n%s", out)
	}
}

func TestOpenRefusals(t *testing.T) {
	needGit(t)
	plain := t.TempDir()
	if _, err := worktree.Open(t.Context(), plain, worktree.Options{}); !errors.Is(err, worktree.ErrNotRepo) || !strings.Contains(err.Error(), plain) {
		t.Errorf("Open(not a repository) = %v; want ErrNotRepo naming the folder", err)
	}
	if _, err := worktree.Open(t.Context(), plain, worktree.Options{Git: filepath.Join(plain, "no-git")}); !errors.Is(err, worktree.ErrNoGit) {
		t.Errorf("Open(no git) = %v; want ErrNoGit", err)
	}
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, empty, "init", "-q")
	if _, err := worktree.Open(t.Context(), empty, worktree.Options{}); !errors.Is(err, worktree.ErrNoCommit) {
		t.Errorf("Open(no commit) = %v; want ErrNoCommit", err)
	}
	ents, _ := os.ReadDir(filepath.Dir(empty))
	if len(ents) != 1 {
		t.Errorf("a refused Open made something: %v", ents)
	}
	dir := repo(t)
	m, err := worktree.Open(t.Context(), dir, worktree.Options{Root: filepath.Join(t.TempDir(), "trees")})
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", "a/b", "..", "x.lock", "-x", "a b"} {
		if _, err := m.Create(t.Context(), "t", bad); err == nil {
			t.Errorf("Create(%q) = nil; want a refusal", bad)
		}
	}
	if _, err := os.Stat(m.Root()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("refused Creates made %s", m.Root())
	}
}

// A Create that fails half way leaves no branch and no folder.
func TestCreateFailureLeavesNothing(t *testing.T) {
	dir := repo(t)
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := worktree.Open(t.Context(), dir, worktree.Options{Root: blocker})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Create(t.Context(), "t", "ann"); err == nil {
		t.Fatal("Create under a file = nil; want an error")
	}
	// git itself refuses: a branch made by hand in the way of the path.
	m2, _ := worktree.Open(t.Context(), dir, worktree.Options{Root: filepath.Join(t.TempDir(), "trees")})
	if err := os.MkdirAll(filepath.Join(m2.Root(), "t"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(m2.Root(), "t", "bob"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := m2.Create(t.Context(), "t", "bob"); !errors.Is(err, worktree.ErrExists) {
		t.Errorf("Create over a file = %v; want ErrExists", err)
	}
	if out := git(t, dir, "branch", "--list", "troupe/*"); out != "" {
		t.Errorf("failed Creates left branches: %q", out)
	}
	if out := git(t, dir, "worktree", "list", "--porcelain"); strings.Count(out, "worktree ") != 1 {
		t.Errorf("failed Creates left worktrees:\n%s", out)
	}
}

// Commits on the branch keep the tree though HEAD was moved off it (an
// agent that committed, then checked out Base to look at the old code):
// Finish used to count Base..HEAD alone and deleted the branch.
func TestFinishKeepsCommitsOffHead(t *testing.T) {
	dir := repo(t)
	m, tr := annTree(t, dir)
	if err := os.WriteFile(filepath.Join(tr.Path, "work.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, tr.Path, "add", ".")
	git(t, tr.Path, "commit", "-q", "-m", "ann's work")
	git(t, tr.Path, "checkout", "-q", "--detach", tr.Base)
	res, err := m.Finish(t.Context(), tr)
	if err != nil {
		t.Fatal(err)
	}
	if res.Removed || res.Changes.Commits != 1 {
		t.Errorf("Finish = removed %v, %d commit(s); want the tree kept with its 1 commit", res.Removed, res.Changes.Commits)
	}
	if out := git(t, dir, "branch", "--list", tr.Branch); out == "" {
		t.Errorf("branch %s with ann's commit is gone", tr.Branch)
	}
}

// Files the repository ignores are no change, but the report of a
// removed tree names them: nobody learns of their loss otherwise.
func TestFinishNamesIgnoredFiles(t *testing.T) {
	dir := repo(t)
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("out/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "ignore out")
	m, tr := annTree(t, dir)
	if err := os.MkdirAll(filepath.Join(tr.Path, "out"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tr.Path, "out", "report.md"), []byte("findings\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := m.Finish(t.Context(), tr)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Removed || !strings.Contains(res.Report(), "ignores") || !strings.Contains(res.Report(), "out/") {
		t.Errorf("Finish = removed %v, report %q; want it removed and the ignored out/ named", res.Removed, res.Report())
	}
}

// annTree opens a Manager on repository dir, with worktrees in a folder of
// the test's, and creates team t's tree for ann.
func annTree(t *testing.T, dir string) (*worktree.Manager, worktree.Tree) {
	t.Helper()
	m, err := worktree.Open(t.Context(), dir, worktree.Options{Root: filepath.Join(t.TempDir(), "trees")})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := m.Create(t.Context(), "t", "ann")
	if err != nil {
		t.Fatal(err)
	}
	return m, tr
}

// TestUnmerged: a session worktree on worktree/<name> counts the commits
// no other branch has, and counts none once they are merged.
func TestUnmerged(t *testing.T) {
	dir := repo(t)
	m, err := worktree.Open(t.Context(), dir, worktree.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := m.CreateSession(t.Context(), "feat")
	if err != nil {
		t.Fatal(err)
	}
	if tr.Branch != "worktree/feat" || tr.Path != filepath.Join(m.Root(), "worktree", "feat") {
		t.Errorf("tree = %+v", tr)
	}
	count := func() int {
		n, err := m.Unmerged(t.Context(), tr)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(); n != 0 {
		t.Errorf("fresh: %d unmerged", n)
	}
	for i, f := range []string{"a.go", "b.go"} {
		os.WriteFile(filepath.Join(tr.Path, f), []byte("package main\n"), 0o644)
		git(t, tr.Path, "add", f)
		git(t, tr.Path, "commit", "-q", "-m", f)
		if n := count(); n != i+1 {
			t.Errorf("after %d commits: %d unmerged", i+1, n)
		}
	}
	git(t, tr.Path, "checkout", "-q", "--detach", "HEAD~1") // the branch alone holds the tip
	if n := count(); n != 2 {
		t.Errorf("detached behind the branch: %d unmerged; want 2", n)
	}
	git(t, dir, "merge", "-q", "--ff-only", "worktree/feat")
	if n := count(); n != 0 {
		t.Errorf("merged into main: %d unmerged", n)
	}
	if _, err := m.CreateSession(t.Context(), "feat"); !errors.Is(err, worktree.ErrExists) {
		t.Errorf("again: %v", err)
	}
	if _, err := m.CreateSession(t.Context(), "../x"); err == nil {
		t.Error("a name with .. accepted")
	}
}
