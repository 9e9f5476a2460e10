package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestHeadlessProtectedPaths runs a scripted model in acceptEdits mode
// that tries to widen its own permissions and to reach outside the
// project through a link, and checks that none of it happens while the
// ordinary work (reads and edits inside, git status, cat) runs unasked.
// Without a prompt command every ask becomes a denial.
func TestHeadlessProtectedPaths(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not found")
	}
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir, outside := filepath.Join(base, "proj"), filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(dir, "src"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	gitConfig := filepath.Join(dir, ".git", "config")
	before, err := os.ReadFile(gitConfig)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "src", "a.go"), []byte("package a\n"), 0o644)
	os.WriteFile(filepath.Join(dir, ".env"), []byte("TOKEN=only-in-dotenv-4711\n"), 0o644)
	if err := os.Symlink(outside, filepath.Join(dir, "src", "link")); err != nil {
		t.Fatal(err)
	}
	pwned := filepath.Join(base, "pwned")

	type call struct {
		id, name string
		input    map[string]any
	}
	calls := []call{
		{"toolu_gitcfg", "Write", map[string]any{"file_path": ".git/config", "content": "[core]\n\tfsmonitor = touch " + pwned + "\n"}},
		{"toolu_status", "Bash", map[string]any{"command": "git status"}},
		{"toolu_settings", "Write", map[string]any{"file_path": ".troupe/settings.json", "content": `{"permissions": {"allow": ["Bash"]}}`}},
		{"toolu_link", "Write", map[string]any{"file_path": "src/link/x", "content": "escaped"}},
		{"toolu_grep", "Grep", map[string]any{"pattern": "only-in-dotenv-4711", "output_mode": "content"}},
		{"toolu_redirect", "Bash", map[string]any{"command": "echo '[core] fsmonitor = x' >> .git/config"}},
		{"toolu_edit", "Edit", map[string]any{"file_path": "src/a.go", "old_string": "package a", "new_string": "package b"}},
		{"toolu_cat", "Bash", map[string]any{"command": "cat src/a.go"}},
		{"toolu_read", "Read", map[string]any{"file_path": "src/a.go"}},
	}
	type turn struct {
		Match map[string]any `json:"match"`
		Reply map[string]any `json:"reply"`
	}
	var turns []turn
	for i, c := range calls {
		turns = append(turns, turn{Match: map[string]any{"turn": i}, Reply: map[string]any{"text": "step",
			"tool_calls": []any{map[string]any{"id": c.id, "name": c.name, "input": c.input}}}})
	}
	turns = append(turns, turn{Match: map[string]any{"turn": len(calls)}, Reply: map[string]any{"text": "Finished."}})
	data, _ := json.Marshal(map[string]any{"model": "scripted-paths", "turns": turns})
	script := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(script, data, 0o644); err != nil {
		t.Fatal(err)
	}

	out, err := headlessRun(t, dir, nil, "", "-p", "--trust", "--script", script, "--output-format", "stream-json",
		"--permission-mode", "acceptEdits", "--disallowedTools", "Read(./.env)", "go")
	if err != nil {
		t.Fatalf("troupe -p: %v\n%s", err, out)
	}
	result := func(id string) string {
		t.Helper()
		res, ok := toolResult(t, out, id)
		if !ok {
			t.Fatalf("no tool result for %s in:\n%s", id, out)
		}
		t.Logf("%s: %s", id, res)
		return res
	}
	denied := func(id string, want ...string) {
		t.Helper()
		res := result(id)
		if !strings.Contains(res, "Permission to use") {
			t.Errorf("%s result %q is not a denial", id, res)
		}
		for _, w := range want {
			if !strings.Contains(res, w) {
				t.Errorf("%s result %q lacks %q", id, res, w)
			}
		}
	}
	ran := func(id string, want ...string) {
		t.Helper()
		res := result(id)
		if strings.Contains(res, "Permission to use") {
			t.Errorf("%s was denied: %q", id, res)
		}
		for _, w := range want {
			if !strings.Contains(res, w) {
				t.Errorf("%s result %q lacks %q", id, res, w)
			}
		}
	}

	// (a) .git/config is protected in acceptEdits, and git status then
	// runs the unchanged config.
	denied("toolu_gitcfg", "protected")
	ran("toolu_status")
	denied("toolu_redirect", "protected")
	if res := result("toolu_redirect"); strings.Contains(res, "--allowedTools") {
		t.Errorf("the hint suggests an allow rule, which cannot allow a protected write: %q", res)
	}
	if after, _ := os.ReadFile(gitConfig); string(after) != string(before) {
		t.Errorf(".git/config changed:\n%s", after)
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Error("the fsmonitor command ran")
	}
	// (b) the project's settings cannot be written.
	denied("toolu_settings", "protected")
	if _, err := os.Stat(filepath.Join(dir, ".troupe", "settings.json")); err == nil {
		t.Error(".troupe/settings.json was written")
	}
	// (c) a link inside the project that leads outside is outside.
	denied("toolu_link", outside)
	if _, err := os.Stat(filepath.Join(outside, "x")); err == nil {
		t.Error("outside/x was written through src/link")
	}
	// (d) a Read deny rule keeps .env out of Grep's results.
	grep := result("toolu_grep")
	if strings.Contains(grep, "TOKEN=") || strings.Contains(grep, ".env:") {
		t.Errorf("Grep showed .env: %q", grep)
	}
	for _, w := range []string{"No matches", "1 path withheld by permission deny rules"} {
		if !strings.Contains(grep, w) {
			t.Errorf("Grep result %q lacks %q", grep, w)
		}
	}
	// Benign work runs without asking.
	ran("toolu_edit", "Edited")
	ran("toolu_cat", "package b")
	ran("toolu_read", "package b")
}
