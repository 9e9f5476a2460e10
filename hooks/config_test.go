package hooks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		json    string
		want    int    // hooks
		warn    string // substring of a warning
		wantErr string // substring of the error
	}{
		{name: "none", json: `{"permissions":{}}`},
		{name: "empty file", json: "  \n"},
		{name: "one", json: `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"x.sh","timeout":5}]}]}}`, want: 1},
		{name: "no matcher", json: `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"a"},{"type":"command","command":"b"}]}]}}`, want: 2},
		{name: "unknown event", json: `{"hooks":{"Bogus":[]}}`, warn: "hooks.Bogus: unknown event"},
		{name: "prompt type", json: `{"hooks":{"Stop":[{"hooks":[{"type":"prompt","prompt":"x"}]}]}}`, warn: `hook type "prompt" is not supported`},
		{name: "bad json", json: `{"hooks":`, wantErr: "settings.json: unexpected end"},
		{name: "hooks not object", json: `{"hooks":[]}`, wantErr: "hooks: want an object of events"},
		{name: "event not list", json: `{"hooks":{"Stop":{}}}`, wantErr: "hooks.Stop: want a list"},
		{name: "bad regexp", json: `{"hooks":{"PreToolUse":[{"matcher":"(","hooks":[]}]}}`, wantErr: `hooks.PreToolUse[0].matcher "("`},
		{name: "missing hooks", json: `{"hooks":{"PreToolUse":[{"matcher":"Bash"}]}}`, wantErr: "hooks.PreToolUse[0].hooks: want a list"},
		{name: "empty command", json: `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":" "}]}]}}`, wantErr: "hooks.Stop[0].hooks[0]: empty command"},
		{name: "bad timeout", json: `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"x","timeout":-1}]}]}}`, wantErr: "timeout -1"},
		{name: "timeout type", json: `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"x","timeout":"5"}]}]}}`, wantErr: "hooks.Stop[0].hooks"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hs, warns, _, err := Parse("settings.json", []byte(tt.json))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Parse() error = %v; want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse() error = %v", err)
			}
			if len(hs) != tt.want {
				t.Errorf("Parse() = %d hooks; want %d", len(hs), tt.want)
			}
			if tt.warn != "" && (len(warns) != 1 || !strings.Contains(warns[0], tt.warn)) {
				t.Errorf("Parse() warnings = %q; want one containing %q", warns, tt.warn)
			}
		})
	}
}

func TestParseTimeoutAndSource(t *testing.T) {
	hs, _, _, err := Parse("f.json", []byte(`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"a","timeout":1.5},{"type":"command","command":"b"}]}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if hs[0].Timeout != 1500*time.Millisecond || hs[1].Timeout != DefaultTimeout || hs[0].Source != "f.json" {
		t.Errorf("Parse() = %+v; want timeouts 1.5s and the default, source f.json", hs)
	}
}

func TestMatcher(t *testing.T) {
	tests := []struct {
		matcher, value string
		want           bool
	}{
		{"", "Bash", true},
		{"*", "Edit", true},
		{"Bash", "Bash", true},
		{"Bash", "BashOutput", false},
		{"Edit|Write", "Write", true},
		{"Edit|Write", "MultiEdit", false},
		{"mcp__.*", "mcp__memory__read", true},
		{"Notebook.*", "NotebookEdit", true},
		{"^Read$", "ReadFile", false},
	}
	for _, tt := range tests {
		m, err := compileMatcher(tt.matcher)
		if err != nil {
			t.Fatal(err)
		}
		h := Hook{match: m}
		if got := h.Matches(tt.value); got != tt.want {
			t.Errorf("matcher %q .Matches(%q) = %v; want %v", tt.matcher, tt.value, got, tt.want)
		}
	}
}

func TestLoadAndChanged(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "missing.json")
	write := func(s string) {
		if err := os.WriteFile(a, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"a"}]}]}, "model":"x"}`)
	c, err := Load([]string{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Hooks) != 1 || c.Changed() {
		t.Fatalf("Load() = %d hooks, Changed() = %v; want 1, false", len(c.Hooks), c.Changed())
	}
	write(`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"a"}]}]}, "model":"y"}`)
	if c.Changed() {
		t.Errorf("Changed() = true after an edit outside hooks; want false")
	}
	write(`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"evil"}]}]}}`)
	if !c.Changed() {
		t.Errorf("Changed() = false after the hooks were edited; want true")
	}
	if len(c.Hooks) != 1 || c.Hooks[0].Command != "a" {
		t.Errorf("the loaded config changed: %+v", c.Hooks)
	}
	write(`{"hooks":{"Stop":1}}`)
	if _, err := Load([]string{a}); err == nil || !strings.Contains(err.Error(), a) {
		t.Errorf("Load(malformed) error = %v; want one naming %s", err, a)
	}
}
