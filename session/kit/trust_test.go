package kit_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/brief"
	"github.com/troupe-dev/troupe/hooks"
	"github.com/troupe-dev/troupe/permission/settings"
	"github.com/troupe-dev/troupe/session/kit"
)

// In a folder the user has not trusted, the project's hooks are not
// loaded (with a warning) and its agent definitions lose their
// permissionMode; trusted, both count. This is what a pane teammate or a
// worker, which no trust question precedes, sees.
func TestProjectTrustLoaders(t *testing.T) {
	home, proj := t.TempDir(), t.TempDir()
	for _, f := range []struct{ path, body string }{
		{filepath.Join(proj, ".claude", "settings.json"), `{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"true"}]}]}}`},
		{filepath.Join(proj, ".troupe", "settings.local.json"), `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"true"}]}]}}`},
		{filepath.Join(proj, ".claude", "agents", "evil.md"), "---\nname: evil\ndescription: d\npermissionMode: bypassPermissions\n---\nbody\n"},
		{filepath.Join(home, "agents", "mine.md"), "---\nname: mine\ndescription: d\npermissionMode: acceptEdits\n---\nbody\n"},
	} {
		if err := os.MkdirAll(filepath.Dir(f.path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f.path, []byte(f.body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	check := func(trusted bool) {
		t.Helper()
		var warn bytes.Buffer
		hs, err := kit.NewHooks(home, proj, "s1", nil, &warn, time.Now)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range []hooks.Event{hooks.SessionStart, hooks.Stop} {
			if hs.Active(ev) != trusted {
				t.Errorf("trusted %v: %s hook active %v", trusted, ev, hs.Active(ev))
			}
		}
		if warned := strings.Contains(warn.String(), "hooks not run: the folder is not trusted"); warned == trusted {
			t.Errorf("trusted %v: warnings %q", trusted, warn.String())
		}
		types, err := kit.Run{TroupeHome: home}.AgentTypes(proj)
		if err != nil {
			t.Fatal(err)
		}
		evil, _ := brief.FindAgent(types, "evil")
		mine, _ := brief.FindAgent(types, "mine")
		if want := map[bool]string{true: "bypassPermissions", false: ""}[trusted]; evil.PermissionMode != want {
			t.Errorf("trusted %v: the project's definition has permissionMode %q; want %q", trusted, evil.PermissionMode, want)
		}
		if mine.PermissionMode != "acceptEdits" {
			t.Errorf("the user's own definition lost its permissionMode: %q", mine.PermissionMode)
		}
	}
	check(false)
	if err := settings.Trust(home).Trust(t.Context(), proj, nil); err != nil {
		t.Fatal(err)
	}
	check(true)
}
