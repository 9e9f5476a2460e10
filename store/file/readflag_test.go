package file

import (
	"encoding/json"
	"testing"
)

// TestReadFlag: the "read" value found by the scan is the one a decode
// into a map finds; entries the scan cannot judge say so.
func TestReadFlag(t *testing.T) {
	for _, tc := range []struct {
		entry string
		want  string
		ok    bool
	}{
		{`{"from":"a","text":"hi","read":true}`, "true", true},
		{`{ "read" : false , "text":"x"}`, "false", true},
		{"{\n  \"text\": \"a \\\"read\\\":true b\",\n  \"read\": false\n}", "false", true},
		{`{"text":"{\"read\":true}","n":[1,{"read":true}],"o":{"read":true}}`, "", true},
		{`{"read":true,"read":false}`, "false", true},
		{`{"read":null}`, "null", true},
		{`{}`, "", true},
		{`{"re\u0061d":true}`, "", false},
		{`[{"read":true}]`, "", false},
		{`null`, "", false},
		{`"read"`, "", false},
	} {
		got, ok := readFlag([]byte(tc.entry))
		if string(got) != tc.want || ok != tc.ok {
			t.Errorf("readFlag(%s) = %q, %v; want %q, %v", tc.entry, got, ok, tc.want, tc.ok)
		}
	}
}

// FuzzReadFlag checks the scan against a decode into a map, which is what
// a read did for every entry, on any valid JSON.
func FuzzReadFlag(f *testing.F) {
	for _, s := range []string{
		`{"from":"team-lead","text":"hello","timestamp":"2026-12-05T10:00:00Z","read":true,"msg_id":"x"}`,
		`{"read":false}`, `{"text":"\"read\":true","read":false}`, `{"a":[1,2,{"b":"]"}],"read":true}`,
		`{"read":true,"read":false}`, `{"re\u0061d":true}`, `{ }`, `[]`, `1`, `{"a":-1.5e3,"read":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		got, ok := readFlag(data)
		if !ok {
			return
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(data, &obj); err != nil {
			t.Fatalf("readFlag(%q) judged an entry a map decode refuses: %v", data, err)
		}
		if string(got) != string(obj["read"]) {
			t.Fatalf("readFlag(%q) = %q; a map decode gives %q", data, got, obj["read"])
		}
	})
}

// FuzzSplitArray checks the split of an inbox against a decode into raw
// messages, on any valid JSON.
func FuzzSplitArray(f *testing.F) {
	for _, s := range []string{
		`[]`, ` [ ] `, `[{"read":true},{"text":"]\"["}]`, "[\n  {\"a\": [1, 2]},\n  null,\n  \"s\"\n]", `{"a":1}`, `[1,[2,[3]],{"b":{}}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		got, ok := splitArray(data)
		var want []json.RawMessage
		err := json.Unmarshal(data, &want)
		if ok != (err == nil && want != nil) { // null decodes to a nil slice
			t.Fatalf("splitArray(%q) ok = %v; a decode into raw messages: %v, %v", data, ok, want, err)
		}
		if !ok {
			return
		}
		if len(got) != len(want) {
			t.Fatalf("splitArray(%q) = %d elements; want %d", data, len(got), len(want))
		}
		for i := range got {
			if string(got[i]) != string(want[i]) {
				t.Fatalf("splitArray(%q) element %d = %q; want %q", data, i, got[i], want[i])
			}
		}
	})
}
