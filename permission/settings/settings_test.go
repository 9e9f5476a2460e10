package settings_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/settings"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// trust records dir as trusted in home's trust store.
func trust(t *testing.T, home, dir string) {
	t.Helper()
	if err := settings.Trust(home).Trust(t.Context(), dir, nil); err != nil {
		t.Fatal(err)
	}
}

func ruleStrings(rs []permission.Rule) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.String()+" @"+filepath.Base(filepath.Dir(r.Source))+"/"+filepath.Base(r.Source))
	}
	return out
}

func TestLoadMergeOrder(t *testing.T) {
	root := t.TempDir()
	home, cwd := filepath.Join(root, "home"), filepath.Join(root, "proj")
	write(t, filepath.Join(home, "settings.json"), `{"theme":"dark","permissions":{"allow":["Bash(ls:*)"],"defaultMode":"plan","additionalDirectories":["~/lib"]}}`)
	write(t, filepath.Join(cwd, ".claude", "settings.json"), `{"permissions":{"deny":["Read(./.env)"],"defaultMode":"acceptEdits","unknown":1}}`)
	write(t, filepath.Join(cwd, ".troupe", "settings.json"), `{"permissions":{"allow":["Bash(npm test)"],"ask":["Bash(git push:*)"],"additionalDirectories":["../shared"]}}`)
	write(t, filepath.Join(cwd, ".claude", "settings.local.json"), "  \n")
	write(t, filepath.Join(cwd, ".troupe", "settings.local.json"), `{"permissions":{"allow":["Edit(docs/**)"],"defaultMode":"dontAsk"}}`)
	trust(t, home, cwd)
	s, err := settings.Load(settings.Files(home, cwd), "/u")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Bash(ls:*) @home/settings.json", "Bash(npm test) @.troupe/settings.json", "Edit(docs/**) @.troupe/settings.local.json"}
	if diff := cmp.Diff(want, ruleStrings(s.Allow)); diff != "" {
		t.Errorf("Allow (-want +got):\n%s", diff)
	}
	if got := ruleStrings(s.Deny); len(got) != 1 || got[0] != "Read(./.env) @.claude/settings.json" {
		t.Errorf("Deny = %v", got)
	}
	if got := ruleStrings(s.Ask); len(got) != 1 {
		t.Errorf("Ask = %v", got)
	}
	if s.DefaultMode != permission.ModeDontAsk || s.ModeSource != filepath.Join(cwd, ".troupe", "settings.local.json") {
		t.Errorf("DefaultMode = %s from %s; want dontAsk from the local file", s.DefaultMode, s.ModeSource)
	}
	if diff := cmp.Diff([]string{"/u/lib", filepath.Join(root, "shared")}, s.Dirs); diff != "" {
		t.Errorf("Dirs (-want +got):\n%s", diff)
	}
	if len(s.Loaded) != 5 {
		t.Errorf("Loaded = %v; want 5 files", s.Loaded)
	}
	if s.Allow[0].Base != "" || s.Allow[1].Base != cwd {
		t.Errorf("Base = %q, %q; want empty for user, cwd for project", s.Allow[0].Base, s.Allow[1].Base)
	}
}

func TestLoadMissingFiles(t *testing.T) {
	root := t.TempDir()
	s, err := settings.Load(settings.Files(filepath.Join(root, "nohome"), filepath.Join(root, "noproj")), "")
	if err != nil || len(s.Loaded) != 0 || s.DefaultMode != "" {
		t.Errorf("Load of missing files = %+v, %v; want empty", s, err)
	}
}

func TestLoadMalformed(t *testing.T) {
	tests := []struct {
		name, content string
		want          []string // substrings of the error, after the path
	}{
		{"syntax", "{\n  \"permissions\": {\n    \"allow\": [\"Bash(ls)\",]\n  }\n}", []string{":3:"}},
		{"truncated", "{\"permissions\": {", []string{":1:", "unexpected end"}},
		{"trailing", "{}\n{}", []string{":2:1", "after the JSON"}},
		{"not object", "[1]", []string{":1:"}},
		{"wrong type list", `{"permissions":{"allow":"Bash"}}`, []string{":1:", "permissions.allow"}},
		{"wrong type item", "{\"permissions\":{\n\"deny\":[1]}}", []string{":2:"}},
		{"wrong type mode", `{"permissions":{"defaultMode":3}}`, []string{":1:"}},
		{"bad rule", `{"permissions":{"ask":["Bash(ls)","Bash("]}}`, []string{"permissions.ask[1]", `"Bash("`}},
		{"bad mode", `{"permissions":{"defaultMode":"yolo"}}`, []string{"permissions.defaultMode", "yolo"}},
		{"bad dir", `{"permissions":{"additionalDirectories":["~bob/x"]}}`, []string{"additionalDirectories[0]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "settings.json")
			write(t, path, tt.content)
			_, err := settings.Load([]settings.File{{Path: path, Base: "/p"}}, "/u")
			var fe *settings.FileError
			if !errors.As(err, &fe) {
				t.Fatalf("Load = %v; want a *FileError", err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, path) {
				t.Errorf("error %q does not start with the file", msg)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
		})
	}
}

func TestAddRule(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".troupe", "settings.local.json")
	ctx := t.Context()
	if err := settings.AddRule(ctx, path, permission.Allow, "Bash(npm test)"); err != nil {
		t.Fatal(err)
	}
	write(t, path, `{"model":"x","permissions":{"allow":["Bash(ls)"],"defaultMode":"plan","extra":true}}`)
	if err := settings.AddRule(ctx, path, permission.Allow, "Bash(npm test)"); err != nil {
		t.Fatal(err)
	}
	if err := settings.AddRule(ctx, path, permission.Allow, "Bash(npm test)"); err != nil {
		t.Fatal(err)
	}
	if err := settings.AddRule(ctx, path, permission.Deny, "Read(./.env)"); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	data, _ := os.ReadFile(path)
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"model": "x", "permissions": map[string]any{
		"allow": []any{"Bash(ls)", "Bash(npm test)"}, "deny": []any{"Read(./.env)"}, "defaultMode": "plan", "extra": true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("file (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(path + ".lock"); !os.IsNotExist(err) {
		t.Errorf("lock directory left behind: %v", err)
	}
}

func TestRemoveRule(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "settings.local.json")
	if err := settings.RemoveRule(ctx, path, permission.Allow, "Bash(ls)"); !errors.Is(err, settings.ErrNoRule) {
		t.Errorf("RemoveRule from no file = %v; want ErrNoRule", err)
	}
	write(t, path, `{"model":"x","permissions":{"allow":["Bash(ls)","Bash(npm test)"],"deny":["Read(./.env)"]}}`)
	if err := settings.RemoveRule(ctx, path, permission.Allow, "Bash(ls)"); err != nil {
		t.Fatal(err)
	}
	if err := settings.RemoveRule(ctx, path, permission.Allow, "Bash(ls)"); !errors.Is(err, settings.ErrNoRule) {
		t.Errorf("removing a rule twice = %v; want ErrNoRule", err)
	}
	if err := settings.RemoveRule(ctx, path, permission.Allow, "Read(./.env)"); !errors.Is(err, settings.ErrNoRule) {
		t.Errorf("removing a deny rule from allow = %v; want ErrNoRule", err)
	}
	var got map[string]any
	data, _ := os.ReadFile(path)
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"model": "x", "permissions": map[string]any{"allow": []any{"Bash(npm test)"}, "deny": []any{"Read(./.env)"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("file (-want +got):\n%s", diff)
	}
}

func TestAddRuleRefusesMalformed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	write(t, path, `{"permissions": [`)
	err := settings.AddRule(t.Context(), path, permission.Allow, "Bash(ls)")
	var fe *settings.FileError
	if !errors.As(err, &fe) {
		t.Fatalf("AddRule on a malformed file = %v; want a *FileError", err)
	}
	if data, _ := os.ReadFile(path); string(data) != `{"permissions": [` {
		t.Errorf("malformed file changed to %q", data)
	}
	if err := settings.AddRule(t.Context(), path, permission.Allow, "Bash("); err == nil {
		t.Error("AddRule with a bad rule = nil; want an error")
	}
}

func TestAddRuleConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	var wg sync.WaitGroup
	const n = 8
	for i := range n {
		wg.Go(func() {
			if err := settings.AddRule(t.Context(), path, permission.Allow, "Bash(echo "+string(rune('a'+i))+")"); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	s, err := settings.Load([]settings.File{{Path: path}}, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Allow) != n {
		t.Errorf("rules after %d concurrent adds = %d", n, len(s.Allow))
	}
}

// Claude Code's defaultMode "auto" is taken as acceptEdits with a warning
// instead of refusing the whole file; the file's rules still load.
func TestLoadClaudeAutoMode(t *testing.T) {
	cwd := t.TempDir()
	write(t, filepath.Join(cwd, ".claude", "settings.json"), `{"permissions":{"defaultMode":"auto","deny":["Read(./.env)"]}}`)
	s, err := settings.Load(settings.Files("", cwd), "")
	if err != nil {
		t.Fatal(err)
	}
	if s.DefaultMode != permission.ModeAcceptEdits || len(s.Deny) != 1 {
		t.Errorf("DefaultMode %q, deny %v; want acceptEdits and the deny rule", s.DefaultMode, ruleStrings(s.Deny))
	}
	if len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], `permissions.defaultMode "auto" is Claude Code's auto mode`) || !strings.Contains(s.Warnings[0], "settings.json") {
		t.Errorf("Warnings = %q", s.Warnings)
	}
}
