package worktree_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/troupe-dev/troupe/worktree"
)

// BenchmarkTeam16 creates and finishes (no changes: removes) one worktree
// per teammate for a team of 16, per op; compare with
// BenchmarkGitWorktreeAdd16, which runs only `git worktree add` and
// `git worktree remove` for 16.
func BenchmarkTeam16(b *testing.B) {
	dir := repo(b)
	m, err := worktree.Open(b.Context(), dir, worktree.Options{})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		trees := make([]worktree.Tree, 16)
		for i := range trees {
			if trees[i], err = m.Create(b.Context(), "bench", fmt.Sprintf("mate%d", i)); err != nil {
				b.Fatal(err)
			}
		}
		for _, t := range trees {
			if res, err := m.Finish(b.Context(), t); err != nil || !res.Removed {
				b.Fatalf("Finish = %+v, %v", res, err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/16/1000, "ms/worktree")
}

// BenchmarkGitWorktreeAdd16 is the floor: git worktree add (detached) and
// git worktree remove alone, for 16.
func BenchmarkGitWorktreeAdd16(b *testing.B) {
	dir := repo(b)
	root := filepath.Join(b.TempDir(), "trees")
	for b.Loop() {
		for i := range 16 {
			git(b, dir, "worktree", "add", "--quiet", "--detach", filepath.Join(root, fmt.Sprint(i)))
		}
		for i := range 16 {
			git(b, dir, "worktree", "remove", filepath.Join(root, fmt.Sprint(i)))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/16/1000, "ms/worktree")
}
