package tasklist_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/troupe-dev/troupe/tasklist"
)

// observedTask is the task file of docs/protocol.md section 8.
const observedTask = `{
  "id": "1",
  "subject": "Greet",
  "description": "Say hello",
  "activeForm": "Greeting",
  "status": "pending",
  "blocks": [],
  "blockedBy": []
}`

func TestTaskDecodeObserved(t *testing.T) {
	var got tasklist.Task
	if err := json.Unmarshal([]byte(observedTask), &got); err != nil {
		t.Fatalf("decode observed task: %v", err)
	}
	want := tasklist.Task{ID: "1", Subject: "Greet", Description: "Say hello", ActiveForm: "Greeting",
		Status: tasklist.StatusPending, Blocks: []string{}, BlockedBy: []string{}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decoded task mismatch (-want +got):\n%s", diff)
	}
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	var orig, round map[string]any
	_ = json.Unmarshal([]byte(observedTask), &orig)
	_ = json.Unmarshal(b, &round)
	if diff := cmp.Diff(orig, round); diff != "" {
		t.Errorf("re-encoded task differs (-orig +encoded):\n%s", diff)
	}
}

func TestTaskJSON(t *testing.T) {
	tests := []struct {
		name, in string
		want     tasklist.Task
	}{
		{"owner, metadata and unknown keys",
			`{"id":"7","subject":"s","description":"d","owner":"helper","status":"in_progress","blocks":["8"],"blockedBy":["2","3"],"metadata":{"lease":{"until":5}},"x_future":[1]}`,
			tasklist.Task{ID: "7", Subject: "s", Description: "d", Owner: "helper", Status: tasklist.StatusInProgress,
				Blocks: []string{"8"}, BlockedBy: []string{"2", "3"},
				Metadata: map[string]json.RawMessage{"lease": json.RawMessage(`{"until":5}`)},
				Extra:    map[string]json.RawMessage{"x_future": json.RawMessage(`[1]`)}}},
		{"missing status is pending, missing edges are nil",
			`{"id":"2","subject":"s"}`,
			tasklist.Task{ID: "2", Subject: "s", Status: tasklist.StatusPending}},
		{"completed", `{"id":"3","subject":"s","status":"completed"}`,
			tasklist.Task{ID: "3", Subject: "s", Status: tasklist.StatusCompleted}},
	}
	for _, tt := range tests {
		var got tasklist.Task
		if err := json.Unmarshal([]byte(tt.in), &got); err != nil {
			t.Errorf("decode %s: %v", tt.name, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("decode %s mismatch (-want +got):\n%s", tt.name, diff)
		}
		b, err := json.Marshal(got)
		if err != nil {
			t.Errorf("encode %s: %v", tt.name, err)
			continue
		}
		for _, frag := range []string{`"blocks":[`, `"blockedBy":[`} {
			if !strings.Contains(string(b), frag) {
				t.Errorf("encode %s = %s; want %s… always present", tt.name, b, frag)
			}
		}
		if (got.Metadata == nil) == strings.Contains(string(b), `"metadata"`) {
			t.Errorf("encode %s = %s; want metadata present exactly when set", tt.name, b)
		}
		var again tasklist.Task
		if err := json.Unmarshal(b, &again); err != nil {
			t.Errorf("decode encoded %s: %v", tt.name, err)
			continue
		}
		if diff := cmp.Diff(got, again, cmpEmpty); diff != "" {
			t.Errorf("decode(encode(%s)) mismatch (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestTaskDecodeErrors(t *testing.T) {
	tests := []struct {
		name, in, mention string
	}{
		{"missing id", `{"subject":"s","status":"pending"}`, "id"},
		{"empty id", `{"id":"","subject":"s"}`, "id"},
		{"numeric id", `{"id":1,"subject":"s"}`, "id"},
		{"status deleted", `{"id":"1","subject":"s","status":"deleted"}`, "status"},
		{"unknown status", `{"id":"1","subject":"s","status":"done"}`, "status"},
		{"blocks string", `{"id":"1","subject":"s","blocks":"2"}`, "blocks"},
		{"blockedBy numbers", `{"id":"1","subject":"s","blockedBy":[2]}`, "blockedBy"},
		{"metadata array", `{"id":"1","subject":"s","metadata":[]}`, "metadata"},
		{"array", `[]`, ""},
		{"null", `null`, ""},
	}
	for _, tt := range tests {
		var got tasklist.Task
		err := json.Unmarshal([]byte(tt.in), &got)
		if err == nil {
			t.Errorf("decode %s (%s) = %+v; want an error", tt.name, tt.in, got)
			continue
		}
		if !strings.Contains(err.Error(), tt.mention) {
			t.Errorf("decode %s error = %q; want it to name %q", tt.name, err, tt.mention)
		}
	}
}

func TestTaskClone(t *testing.T) {
	orig := tasklist.Task{ID: "1", Blocks: []string{"2"}, BlockedBy: []string{"3"},
		Metadata: map[string]json.RawMessage{"k": json.RawMessage(`"v"`)},
		Extra:    map[string]json.RawMessage{"e": json.RawMessage(`1`)}}
	c := orig.Clone()
	if diff := cmp.Diff(orig, c); diff != "" {
		t.Fatalf("Clone mismatch (-want +got):\n%s", diff)
	}
	c.Blocks[0], c.BlockedBy[0] = "x", "y"
	c.Metadata["k"][1] = 'X'
	c.Extra["e"][0] = '2'
	if orig.Blocks[0] != "2" || orig.BlockedBy[0] != "3" || string(orig.Metadata["k"]) != `"v"` || string(orig.Extra["e"]) != "1" {
		t.Errorf("changing a Clone changed the original: %+v", orig)
	}
}

func TestValidID(t *testing.T) {
	tests := []struct {
		id   string
		want bool
		num  uint64
	}{
		{"1", true, 1},
		{"42", true, 42},
		{"9223372036854775807", true, 9223372036854775807},
		{"9223372036854775808", false, 0},
		{"18446744073709551616", false, 0},
		{"0", false, 0},
		{"01", false, 1},
		{"-1", false, 0},
		{"+1", false, 0},
		{"", false, 0},
		{"1.0", false, 0},
		{" 1", false, 0},
		{"1 ", false, 0},
		{"abc", false, 0},
		{"1e3", false, 0},
		{"../1", false, 0},
	}
	for _, tt := range tests {
		if got := tasklist.ValidID(tt.id); got != tt.want {
			t.Errorf("ValidID(%q) = %v; want %v", tt.id, got, tt.want)
		}
		if got := tasklist.IDNum(tt.id); got != tt.num {
			t.Errorf("IDNum(%q) = %d; want %d", tt.id, got, tt.num)
		}
	}
}

func TestStatusValid(t *testing.T) {
	for s, want := range map[tasklist.Status]bool{
		tasklist.StatusPending: true, tasklist.StatusInProgress: true, tasklist.StatusCompleted: true,
		tasklist.StatusDeleted: false, "": false, "PENDING": false,
	} {
		if got := s.Valid(); got != want {
			t.Errorf("Status(%q).Valid() = %v; want %v", s, got, want)
		}
	}
}
