package worktree

import (
	"os"
	"path/filepath"
	"strings"
)

// Checkout reports, for a folder dir inside a linked worktree (one made
// by git worktree add, such as an agent's), the top folder of the
// repository's main checkout and the worktree's own top folder. It reads
// git's files only (the worktree's .git file and its commondir) and runs
// nothing; ok is false for a folder of a main checkout, of a submodule,
// or outside any repository.
func Checkout(dir string) (main, tree string, ok bool) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", "", false
	}
	for d := dir; ; d = filepath.Dir(d) {
		dotgit := filepath.Join(d, ".git")
		fi, err := os.Lstat(dotgit)
		if err == nil {
			if !fi.Mode().IsRegular() {
				return "", "", false // a main checkout's .git folder
			}
			gitdir, ok := readGitdir(dotgit)
			if !ok {
				return "", "", false
			}
			b, err := os.ReadFile(filepath.Join(gitdir, "commondir"))
			if err != nil {
				return "", "", false // a submodule's .git file: no commondir
			}
			common := strings.TrimSpace(string(b))
			if !filepath.IsAbs(common) {
				common = filepath.Join(gitdir, common)
			}
			common = filepath.Clean(common)
			if filepath.Base(common) != ".git" {
				return "", "", false // a bare repository: no main checkout
			}
			return filepath.Dir(common), d, true
		}
		if filepath.Dir(d) == d {
			return "", "", false
		}
	}
}

// readGitdir returns the folder a .git file names ("gitdir: PATH").
func readGitdir(dotgit string) (string, bool) {
	b, err := os.ReadFile(dotgit)
	if err != nil {
		return "", false
	}
	p, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return "", false
	}
	p = strings.TrimSpace(p)
	if !filepath.IsAbs(p) {
		p = filepath.Join(filepath.Dir(dotgit), p)
	}
	return filepath.Clean(p), true
}
