package settings

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKey reads a top-level key across the settings files: the last file
// that sets it wins, absent and malformed files are skipped, and a value
// of the wrong type is an error naming the file and the key.
func TestKey(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) File {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return File{Path: p}
	}
	user := write("user.json", `{"autoDream": true, "teammateMode": "tmux"}`)
	project := write("project.json", `{"teammateMode": "in-process"}`)
	broken := write("broken.json", `{"teammateMode": `)
	missing := File{Path: filepath.Join(dir, "missing.json")}
	files := []File{user, missing, project, broken}

	mode, from, err := Key[string](files, "teammateMode")
	if err != nil || mode != "in-process" || from != project.Path {
		t.Errorf("teammateMode = %q from %s, %v; want the project's in-process", mode, from, err)
	}
	on, from, err := Key[bool](files, "autoDream")
	if err != nil || !on || from != user.Path {
		t.Errorf("autoDream = %v from %s, %v; want the user's true", on, from, err)
	}
	n, from, err := Key[float64](files, "autoDreamMinHours")
	if err != nil || n != 0 || from != "" {
		t.Errorf("an unset key = %v from %q, %v; want zero from no file", n, from, err)
	}
	bad := write("bad.json", `{"autoDream": "yes"}`)
	_, from, err = Key[bool](append(files, bad), "autoDream")
	if err == nil || !strings.Contains(err.Error(), bad.Path) || !strings.Contains(err.Error(), "autoDream") || from != bad.Path {
		t.Errorf("a string for a bool = %v from %s; want an error naming %s and the key", err, from, bad.Path)
	}
}
