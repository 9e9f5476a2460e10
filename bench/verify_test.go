package bench

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestTextIDAndFiller(t *testing.T) {
	text := Filler("<w3-m17>", 300)
	if len(text) != 300 {
		t.Errorf("len(Filler(..., 300)) = %d; want 300", len(text))
	}
	if id, ok := TextID(text); !ok || id != "w3-m17" {
		t.Errorf("TextID(%q) = %q, %t; want w3-m17", text[:20], id, ok)
	}
	for _, bad := range []string{"", "hello", "<>x", "<unterminated"} {
		if id, ok := TextID(bad); ok {
			t.Errorf("TextID(%q) = %q, true; want false", bad, id)
		}
	}
}

func TestVerify(t *testing.T) {
	tests := []struct {
		name  string
		sent  map[string]bool
		found []string
		want  Tally
	}{
		{
			name:  "clean",
			sent:  map[string]bool{"a": true, "b": true, "c": false},
			found: []string{"a", "b"},
			want:  Tally{Entries: 2, Stored: 2},
		},
		{
			name:  "missing and duplicated",
			sent:  map[string]bool{"a": true, "b": true, "c": true},
			found: []string{"a", "b", "b"},
			want:  Tally{Entries: 3, Stored: 2, Lost: 1, Duplicates: 1},
		},
		{
			name:  "phantom and an entry without id",
			sent:  map[string]bool{"a": true},
			found: []string{"a", "zz", ""},
			want:  Tally{Entries: 3, Stored: 1, Phantoms: 2},
		},
		{
			name:  "a failed send that landed",
			sent:  map[string]bool{"a": true, "b": false},
			found: []string{"a", "b"},
			want:  Tally{Entries: 2, Stored: 2, StoredAfterError: 1},
		},
		{
			name:  "a preloaded message lost",
			sent:  preloaded(3),
			found: []string{"pre-0", "pre-2"},
			want:  Tally{Entries: 2, Stored: 2, Lost: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Verify(tt.sent, tt.found)
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(Tally{}, "Examples")); diff != "" {
				t.Errorf("Verify(%v, %v) mismatch (-want +got):\n%s", tt.sent, tt.found, diff)
			}
			if got.Clean() != (tt.want.Lost+tt.want.Duplicates+tt.want.Phantoms+tt.want.StoredAfterError == 0) {
				t.Errorf("Verify(...).Clean() = %t for %+v", got.Clean(), got)
			}
			if !got.Clean() && len(got.Examples) == 0 {
				t.Errorf("Verify(...) found problems but named no example: %+v", got)
			}
		})
	}
}

// TestVerifyInboxFile feeds the file check a synthetic inbox, written the
// way the peer writes (pretty JSON, no msg_id), with one acknowledged
// message missing, one duplicated and one nobody sent.
func TestVerifyInboxFile(t *testing.T) {
	type entry struct {
		From string `json:"from"`
		Text string `json:"text"`
		Read bool   `json:"read"`
	}
	var entries []entry
	for _, id := range []string{"w0-m0", "w0-m1", "w1-m0", "w1-m0", "ghost-m9"} {
		entries = append(entries, entry{From: "w", Text: Filler("<"+id+">", 300)})
	}
	data, err := json.MarshalIndent(entries, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "team-lead.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := ReadInbox(path)
	if err != nil {
		t.Fatalf("ReadInbox = %v", err)
	}
	sent := map[string]bool{"w0-m0": true, "w0-m1": true, "w1-m0": true, "w1-m1": true, "w1-m2": false}
	got := Verify(sent, f.IDs)
	want := Tally{Entries: 5, Stored: 3, Lost: 1, Duplicates: 1, Phantoms: 1}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(Tally{}, "Examples")); diff != "" {
		t.Errorf("Verify(inbox) mismatch (-want +got):\n%s", diff)
	}
	wantEx := []string{`phantom "ghost-m9"`, "duplicate w1-m0", "lost w1-m1"}
	if diff := cmp.Diff(wantEx, got.Examples); diff != "" {
		t.Errorf("Verify(inbox).Examples mismatch (-want +got):\n%s", diff)
	}
}

func TestReadInboxRejectsBadFiles(t *testing.T) {
	tests := []struct {
		name, content, want string
	}{
		{"truncated", `[{"from":"a","text":"<x> hi"},`, "not a valid JSON array"},
		{"empty", ``, "not a valid JSON array"},
		{"object", `{"text":"<x>"}`, "not a valid JSON array"},
		{"entry without text", `[{"from":"a"}]`, "has no text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "inbox.json")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := ReadInbox(path); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ReadInbox(%q) = %v; want an error containing %q", tt.content, err, tt.want)
			}
		})
	}
}
