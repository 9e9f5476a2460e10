package fileedit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Concurrent edits of one file each land once; a refused change and a
// nil change leave the file as it was; a new file gets newMode, an old
// one keeps its mode.
func TestEdit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "settings.json")
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			err := Edit(context.Background(), path, 0o600, func(data []byte) ([]byte, error) {
				return append(data, fmt.Sprintf("line %d\n", i)...), nil
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 16 {
		if n := strings.Count(string(data), fmt.Sprintf("line %d\n", i)); n != 1 {
			t.Errorf("line %d is in the file %d times", i, n)
		}
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("a new file's mode: %v", fi.Mode().Perm())
	}
	os.Chmod(path, 0o640)
	boom := errors.New("refused")
	if err := Edit(context.Background(), path, 0o600, func([]byte) ([]byte, error) { return []byte("x"), boom }); !errors.Is(err, boom) {
		t.Errorf("a refused change: %v", err)
	}
	if err := Edit(context.Background(), path, 0o600, func([]byte) ([]byte, error) { return nil, nil }); err != nil {
		t.Error(err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(data) {
		t.Error("a refused or empty change changed the file")
	}
	if err := Edit(context.Background(), path, 0o600, func(d []byte) ([]byte, error) { return append(d, "more\n"...), nil }); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Errorf("an existing file's mode changed to %v", fi.Mode().Perm())
	}
	if _, err := os.Stat(path + ".lock"); !os.IsNotExist(err) {
		t.Errorf("the lock is left behind: %v", err)
	}
}
