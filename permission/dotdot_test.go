package permission_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/troupe-dev/troupe/internal/realpath"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/shell"
)

// A path with ".." after a link leads where the kernel takes it, below the
// link's target, not where the text says: such a command needs approval
// (and a deny rule is not passed over in bypassPermissions mode), while
// ".." after a real folder is judged as before.
func TestBashDotDotAfterLink(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	work, out := filepath.Join(root, "work"), filepath.Join(root, "out")
	for _, d := range []string{filepath.Join(work, "sub"), filepath.Join(out, "deep"), filepath.Join(work, ".git", "objects")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(out, "secret.txt"), filepath.Join(work, "a.txt")} {
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(out, "deep"), filepath.Join(work, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(work, ".git", "objects"), filepath.Join(work, "obj")); err != nil {
		t.Fatal(err)
	}
	req := func(cmd string, mode permission.Mode) permission.Request {
		in, _ := json.Marshal(map[string]string{"command": cmd})
		return permission.Request{Tool: "Bash", Input: in, Cwd: work, Mode: mode}
	}
	plain := permission.Policy{Shell: shell.Parse, Realpath: realpath.Resolve}
	denying := permission.Policy{Shell: shell.Parse, Realpath: realpath.Resolve, Deny: rules(t, "Read(/"+out+"/**)")}
	for _, tt := range []struct {
		p    permission.Policy
		cmd  string
		mode permission.Mode
		want permission.Behavior
	}{
		{plain, "cat link/../secret.txt", permission.ModeDefault, permission.Ask},
		{plain, "cat sub/../a.txt", permission.ModeDefault, permission.Allow},
		{plain, "echo pwned > link/../written.txt", permission.ModeAcceptEdits, permission.Ask},
		{plain, "echo ok > sub/../written.txt", permission.ModeAcceptEdits, permission.Allow},
		{plain, "printf x > obj/../hooks/pre-commit", permission.ModeAcceptEdits, permission.Ask},
		{plain, "git diff --output=link/../x", permission.ModeDefault, permission.Ask},
		{denying, "cat link/../secret.txt", permission.ModeBypass, permission.Ask},
		{denying, "cat link/../secret.txt", permission.ModeDefault, permission.Ask},
	} {
		if d := tt.p.Check(req(tt.cmd, tt.mode)); d.Behavior != tt.want {
			t.Errorf("mode %s: Check(%q) = %s (%s); want %s", tt.mode, tt.cmd, d.Behavior, d.Reason, tt.want)
		}
	}
}
