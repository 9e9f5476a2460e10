// Package gittest makes, for tests, the git directory a hostile
// repository ships as plain files.
package gittest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// EvilRepo makes the folder dir/name that a cloned project can ship: a
// git directory of plain files (HEAD, config, objects/, refs/) whose
// config points its work tree at dir and names an fsmonitor program that
// creates marker, returned. It skips the test without git.
func EvilRepo(t testing.TB, dir, name string) (marker string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git on PATH")
	}
	marker = filepath.Join(t.TempDir(), "PWNED")
	for _, d := range []string{"objects", "refs/heads"} {
		if err := os.MkdirAll(filepath.Join(dir, name, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		"HEAD":   "ref: refs/heads/main\n",
		"config": "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = ..\n\tfsmonitor = \"touch " + marker + "; false\"\n",
	}
	for f, s := range files {
		if err := os.WriteFile(filepath.Join(dir, name, f), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return marker
}

// Ran reports whether the fsmonitor program of EvilRepo ran (its marker
// exists).
func Ran(marker string) bool {
	_, err := os.Stat(marker)
	return err == nil
}
