package jsonx

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSplitJoinRoundTrip(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		known []string
		extra []string
	}{
		{"none", `{"a":1,"b":2}`, []string{"a", "b"}, nil},
		{"one", `{"a":1,"z":{"deep":[1,2]}}`, []string{"a"}, []string{"z"}},
		{"all unknown", `{"x":"y","w":null}`, []string{"a"}, []string{"w", "x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ex, err := Split([]byte(tt.in), tt.known...)
			if err != nil {
				t.Fatalf("Split(%s) error: %v", tt.in, err)
			}
			var got []string
			for k := range ex {
				got = append(got, k)
			}
			if len(got) != len(tt.extra) {
				t.Fatalf("Split(%s) extra keys = %v; want %v", tt.in, got, tt.extra)
			}
			out, err := Join([]byte(`{"a":1}`), ex, "a")
			if err != nil {
				t.Fatalf("Join error: %v", err)
			}
			var m map[string]any
			if err := json.Unmarshal(out, &m); err != nil {
				t.Fatalf("Join produced invalid JSON %s: %v", out, err)
			}
			for _, k := range tt.extra {
				if _, ok := m[k]; !ok {
					t.Errorf("Join output %s lacks key %q", out, k)
				}
			}
		})
	}
}

func TestJoinEmptyObjectAndConflicts(t *testing.T) {
	out, err := Join([]byte(`{}`), Extra{"k": json.RawMessage(`true`), "a": json.RawMessage(`5`)}, "a")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(`{"k":true}`, string(out)); diff != "" {
		t.Errorf("Join(empty) mismatch (-want +got):\n%s", diff)
	}
	if _, err := Join([]byte(`[]`), Extra{"k": json.RawMessage(`1`)}); err == nil {
		t.Error("Join on an array succeeded; want an error")
	}
	if _, err := Split([]byte(`null`)); err == nil {
		t.Error("Split(null) succeeded; want an error")
	}
}
