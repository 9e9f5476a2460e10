package worktree_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/troupe-dev/troupe/worktree"
)

func TestCheckout(t *testing.T) {
	dir := repo(t)
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	m, err := worktree.Open(t.Context(), dir, worktree.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := m.Create(t.Context(), "team", "bob")
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(tr.Path, "sub", "deep"), 0o755)
	real := func(p string) string { r, _ := filepath.EvalSymlinks(p); return r }
	for _, d := range []string{tr.Path, filepath.Join(tr.Path, "sub", "deep")} {
		main, tree, ok := worktree.Checkout(d)
		if !ok || real(main) != real(dir) || real(tree) != real(tr.Path) {
			t.Errorf("Checkout(%s) = %s, %s, %v; want %s, %s, true", d, main, tree, ok, dir, tr.Path)
		}
	}
	for _, d := range []string{dir, filepath.Join(dir, "sub"), t.TempDir()} {
		if main, tree, ok := worktree.Checkout(d); ok {
			t.Errorf("Checkout(%s) = %s, %s, true; want false (not a linked worktree)", d, main, tree)
		}
	}
}

// Making a worktree runs none of the repository's hooks (internal/gitenv).
func TestCreateRunsNoHook(t *testing.T) {
	dir := repo(t)
	marker := filepath.Join(t.TempDir(), "hook-ran")
	if err := os.WriteFile(filepath.Join(dir, ".git", "hooks", "post-checkout"), []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TROUPE_GIT_HOOKS", "")
	m, err := worktree.Open(t.Context(), dir, worktree.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Create(t.Context(), "team", "bob"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("git worktree add ran the repository's post-checkout hook")
	}
}

// FuzzCheckout feeds Checkout any .git file and commondir: it never
// panics, and what it reports is absolute, the tree being the folder of
// the .git file.
func FuzzCheckout(f *testing.F) {
	f.Add("gitdir: /src/app/.git/worktrees/bob\n", "../..\n")
	f.Add("gitdir: ../app/.git/worktrees/bob", "/src/app/.git")
	f.Add("gitdir: ../.git/modules/sub\n", "")
	f.Add("", "")
	f.Add("gitdir:", "..")
	f.Fuzz(func(t *testing.T, dotgit, commondir string) {
		root := t.TempDir()
		gd := filepath.Join(root, "app", ".git", "worktrees", "bob")
		if err := os.MkdirAll(gd, 0o755); err != nil {
			t.Fatal(err)
		}
		tree := filepath.Join(root, "tree")
		os.MkdirAll(tree, 0o755)
		if err := os.WriteFile(filepath.Join(tree, ".git"), []byte(dotgit), 0o644); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(gd, "commondir"), []byte(commondir), 0o644)
		main, got, ok := worktree.Checkout(tree)
		if !ok {
			return
		}
		if !filepath.IsAbs(main) || got != tree {
			t.Errorf("Checkout = %q, %q; want an absolute main and the tree %q", main, got, tree)
		}
	})
}
