package approve_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/internal/realpath"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/approve"
)

// realTree makes a project with a link src/link to a folder outside and
// a link src/cfg to the project's .git/config.
func realTree(t *testing.T) (proj, out string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	proj, out = filepath.Join(base, "proj"), filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(proj, "src"), filepath.Join(proj, ".git"), out} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(out, filepath.Join(proj, "src", "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../.git/config", filepath.Join(proj, "src", "cfg")); err != nil {
		t.Fatal(err)
	}
	return proj, out
}

// With a real file tree: a link inside the project that leads outside is
// outside, a link to .git/config is protected, and Confine refuses what
// the check would not have let through.
func TestRealTree(t *testing.T) {
	proj, out := realTree(t)
	ap := &approve.Approver{Policy: permission.Policy{Realpath: realpath.Resolve,
		Deny: []permission.Rule{permission.MustParseRule("Read(./.env)")}}, Cwd: proj, Mode: permission.ModeAcceptEdits}
	tests := []struct {
		tool, path string
		allow      bool
	}{
		{"Write", "src/link/x", false},
		{"Write", "src/link/new/dir/x", false},
		{"Read", "src/link/secret", false},
		{"Write", "src/cfg", false},
		{"Write", ".git/config", false},
		{"Write", ".troupe/settings.json", false},
		{"Write", "src/a.go", true},
		{"Read", "src/a.go", true},
	}
	for _, tt := range tests {
		in, _ := json.Marshal(map[string]string{"file_path": filepath.Join(proj, tt.path)})
		v, err := ap.Approve(context.Background(), agent.Request{Tool: tt.tool, Input: in})
		if err != nil {
			t.Fatal(err)
		}
		if v.Allow != tt.allow {
			t.Errorf("Approve(%s %s) = %v (%s); want %v", tt.tool, tt.path, v.Allow, v.Reason, tt.allow)
		}
	}

	// Confine: the tool opened something other than what was checked.
	a := filepath.Join(proj, "src", "a.go")
	if err := ap.Confine("Write", a, filepath.Join(out, "a.go")); err == nil {
		t.Error("Confine(src/a.go really outside) = nil; want a refusal")
	}
	if err := ap.Confine("Write", a, filepath.Join(proj, ".git", "config")); err == nil {
		t.Error("Confine(src/a.go really .git/config) = nil; want a refusal")
	}
	if err := ap.Confine("Read", a, filepath.Join(proj, ".env")); err == nil {
		t.Error("Confine(src/a.go really .env) = nil; want a refusal")
	}
	if err := ap.Confine("Write", a, filepath.Join(proj, "src", "b.go")); err != nil {
		t.Errorf("Confine(inside to inside) = %v; want nil", err)
	}
	// A path that was asked about (and approved) may stay where it is.
	if err := ap.Confine("Write", filepath.Join(out, "x"), filepath.Join(out, "x")); err != nil {
		t.Errorf("Confine(outside, unchanged) = %v; want nil", err)
	}
	if !ap.Withholds(filepath.Join(proj, ".env")) || ap.Withholds(a) {
		t.Error("Withholds does not follow the Read deny rule")
	}
	var nilAp *approve.Approver
	if nilAp.Confine("Write", a, "/etc/x") != nil || nilAp.Withholds(a) {
		t.Error("a nil Approver refuses or withholds")
	}
}
