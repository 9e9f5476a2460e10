package worktree_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/troupe-dev/troupe/worktree"
)

// ReadState on a real repository: the branch, a changed and an untracked
// file; outside a repository, the zero State and no error; a detached
// HEAD has no branch.
func TestReadState(t *testing.T) {
	dir := repo(t)
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "new.txt"), []byte("x"), 0o644)
	st, err := worktree.ReadState(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	want := worktree.State{Repo: true, Branch: "main", Status: []string{" M main.go", "?? new.txt"}}
	if diff := cmp.Diff(want, st); diff != "" {
		t.Errorf("ReadState mismatch (-want +got):\n%s", diff)
	}
	git(t, dir, "checkout", "-q", "--detach")
	if st, err := worktree.ReadState(t.Context(), dir); err != nil || st.Branch != "" || !st.Repo {
		t.Errorf("detached: ReadState = %+v, %v; want a repository without a branch", st, err)
	}
	if st, err := worktree.ReadState(t.Context(), t.TempDir()); err != nil || st.Repo {
		t.Errorf("outside a repository: ReadState = %+v, %v; want the zero State", st, err)
	}
}
