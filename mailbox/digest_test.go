package mailbox

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"
)

func TestInputDigest(t *testing.T) {
	sum := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	tests := []struct {
		tool, input, canonical string
	}{
		{"Bash", `{"command":"rm -rf build"}`, "Bash\x00{\"command\":\"rm -rf build\"}"},
		{"Edit", `{ "new_string": "<b>&", "file_path": "/a", "old_string": "x\ny" }`,
			"Edit\x00{\"file_path\":\"/a\",\"new_string\":\"<b>&\",\"old_string\":\"x\\ny\"}"},
		{"T", `{"b":{"z":1.0,"a":[true,null,2.5,1e3]},"a":"\u0001é"}`,
			"T\x00{\"a\":\"\\u0001é\",\"b\":{\"a\":[true,null,2.5,1000],\"z\":1}}"},
	}
	for _, tt := range tests {
		got, err := InputDigest(tt.tool, json.RawMessage(tt.input))
		if err != nil {
			t.Fatalf("InputDigest(%s, %s): %v", tt.tool, tt.input, err)
		}
		if want := sum(tt.canonical); got != want {
			t.Errorf("InputDigest(%s, %s) = %s, want the digest of %q", tt.tool, tt.input, got, tt.canonical)
		}
	}
	a, _ := InputDigest("Bash", json.RawMessage(`{"command":"ls"}`))
	b, _ := InputDigest("Bash", json.RawMessage(`{"command":"ls "}`))
	c, _ := InputDigest("Read", json.RawMessage(`{"command":"ls"}`))
	if a == b || a == c {
		t.Error("different calls gave the same digest")
	}
	if _, err := InputDigest("Bash", json.RawMessage(`{"command":`)); err == nil {
		t.Error("a truncated input gave a digest")
	}
}

func FuzzInputDigest(f *testing.F) {
	for _, s := range []string{`{"command":"ls"}`, `{"a":[1,2,{"b":null}]}`, `"x"`, `1e400`, `{`, `{"\u2028":"\ud800"}`} {
		f.Add("Bash", s)
	}
	f.Fuzz(func(t *testing.T, tool, input string) {
		d1, err1 := InputDigest(tool, json.RawMessage(input))
		d2, err2 := InputDigest(tool, json.RawMessage(input))
		if (err1 == nil) != (err2 == nil) || d1 != d2 {
			t.Fatalf("not deterministic: %q %v / %q %v", d1, err1, d2, err2)
		}
	})
}
