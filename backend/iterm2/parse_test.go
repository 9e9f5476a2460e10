package iterm2

import (
	"strings"
	"testing"
)

func TestParseCreated(t *testing.T) {
	tests := []struct {
		out, want, err string
	}{
		{"Created new pane: ABC-123\n", "ABC-123", ""},
		{"warning: slow\nCreated new pane:   w0t0p1:ABC  \n", "w0t0p1:ABC", ""},
		{"", "", `want a line "Created new pane: <id>"`},
		{"Created new pane: \n", "", `bad session id ""`},
		{"Created new pane: a b\n", "", `bad session id "a b"`},
		{"Created new pane: -s\n", "", `bad session id "-s"`},
	}
	for _, tt := range tests {
		got, err := parseCreated(tt.out)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("parseCreated(%q) = %q, %v; want an error containing %q", tt.out, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("parseCreated(%q) = %q, %v; want %q", tt.out, got, err, tt.want)
		}
	}
}

func TestParseList(t *testing.T) {
	ids := parseList("w0t0p0:LEADER-1\tname\n  ABC-2 (busy)\n{\"id\": \"J-3\"}\n")
	for _, id := range []string{"LEADER-1", "ABC-2", "J-3", "w0t0p0"} {
		if !ids[id] {
			t.Errorf("parseList lacks %q: %v", id, ids)
		}
	}
	if ids["ABC"] || ids["LEADER"] {
		t.Errorf("parseList split an id at '-': %v", ids)
	}
}

func FuzzParseCreated(f *testing.F) {
	f.Add("Created new pane: ABC-123\n")
	f.Add("noise\nCreated new pane: x\nCreated new pane: y\n")
	f.Add("Created new pane:\x00\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, out string) {
		id, err := parseCreated(out)
		if err != nil {
			return
		}
		if !validSessionID(id) || !strings.Contains(out, id) {
			t.Fatalf("parseCreated(%q) = %q", out, id)
		}
	})
}

func FuzzParseList(f *testing.F) {
	f.Add("w0t0p0:LEADER-1\tname\n")
	f.Add("")
	f.Add("a b\x15c")
	f.Fuzz(func(t *testing.T, out string) {
		for id := range parseList(out) {
			if id == "" || !strings.Contains(out, id) || strings.ContainsAny(id, " \t\n:") {
				t.Fatalf("parseList(%q) gave %q", out, id)
			}
		}
	})
}
