package kit

import (
	"context"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/permission/approve"
	"github.com/troupe-dev/troupe/permission/settings"
)

// infoModel is a model that only describes itself (webTools reads its
// provider; nothing here calls it).
type infoModel string

func (m infoModel) Stream(context.Context, llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) { yield(llm.Event{}, llm.ErrNoResponse) }
}
func (m infoModel) Info() llm.Info { return llm.Info{Provider: string(m)} }

func names(ts []interface{ Spec() llm.ToolSpec }) string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Spec().Name)
	}
	return strings.Join(out, ",")
}

func TestWebToolsOffered(t *testing.T) {
	tests := []struct {
		provider, search, want string
	}{
		{"anthropic", "", "WebFetch,WebSearch"},
		{"openai", "", "WebFetch"},
		{"scripted", "http://localhost:8888/search", "WebFetch,WebSearch"},
	}
	for _, tt := range tests {
		o := ToolOptions{Model: infoModel(tt.provider), Context: &Context{webSearch: tt.search}}
		var ts []interface{ Spec() llm.ToolSpec }
		for _, x := range webTools(o) {
			ts = append(ts, x)
		}
		if got := names(ts); got != tt.want {
			t.Errorf("%s with search %q: tools %s; want %s", tt.provider, tt.search, got, tt.want)
		}
	}
	if got := webTools(ToolOptions{}); got != nil {
		t.Errorf("webTools without a model = %v; want none", got)
	}
	var _ hostNamer = (*approve.Approver)(nil)
	var _ hostNamer = ceiled{}
}

// TestSearchURLTrust: the project's webSearch.url counts once the folder
// is trusted; the user's always; a bad URL is warned about.
func TestSearchURLTrust(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	write := func(path, body string) {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var warned []string
	warn := func(s string) { warned = append(warned, s) }
	write(filepath.Join(cwd, ".troupe", "settings.json"), `{"webSearch": {"url": "https://project.example/search"}}`)
	if got := searchURL(home, cwd, warn); got != "" {
		t.Errorf("untrusted project: searchURL = %q; want none", got)
	}
	write(filepath.Join(home, "settings.json"), `{"webSearch": {"url": "http://localhost:8888/search"}}`)
	if got := searchURL(home, cwd, warn); got != "http://localhost:8888/search" {
		t.Errorf("user setting: searchURL = %q", got)
	}
	if err := settings.Trust(home).Trust(t.Context(), cwd, nil); err != nil {
		t.Fatal(err)
	}
	if got := searchURL(home, cwd, warn); got != "https://project.example/search" {
		t.Errorf("trusted project: searchURL = %q; want the project's", got)
	}
	write(filepath.Join(cwd, ".troupe", "settings.local.json"), `{"webSearch": {"url": "file:///etc/passwd"}}`)
	if got := searchURL(home, cwd, warn); got != "" || len(warned) != 1 || !strings.Contains(warned[0], "want an http:// or https:// URL") {
		t.Errorf("bad URL: searchURL = %q, warnings %q", got, warned)
	}
}

// TestSmallModelName: ANTHROPIC_SMALL_FAST_MODEL wins over the setting
// smallModel; the project's setting counts once the folder is trusted,
// the user's always; a value that is not a string is warned about
// (cmd/troupe's TestWebFetchSmallModelAnthropic checks WebFetch uses it).
func TestSmallModelName(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	write := func(path, body string) {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var warned []string
	warn := func(s string) { warned = append(warned, s) }
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	if got := smallModelName(home, cwd, getenv, warn); got != "" {
		t.Errorf("nothing set: smallModelName = %q; want none", got)
	}
	write(filepath.Join(cwd, ".troupe", "settings.json"), `{"smallModel": "project-small"}`)
	if got := smallModelName(home, cwd, getenv, warn); got != "" {
		t.Errorf("untrusted project: smallModelName = %q; want none", got)
	}
	write(filepath.Join(home, "settings.json"), `{"smallModel": "user-small"}`)
	if got := smallModelName(home, cwd, getenv, warn); got != "user-small" {
		t.Errorf("user setting: smallModelName = %q", got)
	}
	if err := settings.Trust(home).Trust(t.Context(), cwd, nil); err != nil {
		t.Fatal(err)
	}
	if got := smallModelName(home, cwd, getenv, warn); got != "project-small" {
		t.Errorf("trusted project: smallModelName = %q; want the project's", got)
	}
	env["ANTHROPIC_SMALL_FAST_MODEL"] = " env-small "
	if got := smallModelName(home, cwd, getenv, warn); got != "env-small" {
		t.Errorf("environment: smallModelName = %q; want env-small", got)
	}
	delete(env, "ANTHROPIC_SMALL_FAST_MODEL")
	write(filepath.Join(cwd, ".troupe", "settings.local.json"), `{"smallModel": 7}`)
	if got := smallModelName(home, cwd, getenv, warn); got != "" || len(warned) != 1 || !strings.Contains(warned[0], "smallModel") {
		t.Errorf("bad value: smallModelName = %q, warnings %q", got, warned)
	}
}
