package filetool

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

// Write and Edit ask the Guard with the absolute path before changing a
// file; a refusal is the call's error result and leaves the file alone.
// Read, Glob and Grep never ask it.
func TestGuard(t *testing.T) {
	root := tree(t, file{path: "held.txt", content: "one\n"}, file{path: "free.txt", content: "one\n"})
	held := filepath.Join(root, "held.txt")
	var mu sync.Mutex
	var asked []string
	cfg := Config{Root: root, Guard: func(ctx context.Context, path string) error {
		if ctx == nil {
			t.Error("Guard got a nil context")
		}
		mu.Lock()
		asked = append(asked, path)
		mu.Unlock()
		if path == held {
			return errors.New("held.txt is being edited by worker a1")
		}
		return nil
	}}
	check(t, "write held", run(t, NewWrite(cfg), js(map[string]any{"file_path": "sub/../held.txt", "content": "two\n"})), true,
		"Write: refused: held.txt is being edited by worker a1")
	check(t, "edit held", run(t, NewEdit(cfg), js(map[string]any{"file_path": held, "old_string": "one", "new_string": "two"})), true,
		"Edit: refused: held.txt is being edited by worker a1")
	if b, _ := os.ReadFile(held); string(b) != "one\n" {
		t.Errorf("held.txt = %q after refused writes", b)
	}
	check(t, "edit free", run(t, NewEdit(cfg), js(map[string]any{"file_path": "free.txt", "old_string": "one", "new_string": "two"})), false, "Edited")
	check(t, "write new", run(t, NewWrite(cfg), js(map[string]any{"file_path": "new.txt", "content": "x"})), false, "Created")
	check(t, "read held", run(t, NewRead(cfg), js(map[string]any{"file_path": held})), false, "one")
	check(t, "grep held", run(t, NewGrep(cfg), js(map[string]any{"pattern": "one", "output_mode": "content"})), false, "held.txt")
	check(t, "glob", run(t, NewGlob(cfg), js(map[string]any{"pattern": "*.txt"})), false, "held.txt")
	want := []string{held, held, filepath.Join(root, "free.txt"), filepath.Join(root, "new.txt")}
	if !slices.Equal(asked, want) {
		t.Errorf("Guard asked for %v; want %v (Write and Edit only, absolute paths)", asked, want)
	}
}
