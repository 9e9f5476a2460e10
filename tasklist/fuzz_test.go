package tasklist_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/troupe-dev/troupe/tasklist"
)

var rawEqual = cmp.Comparer(func(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	return cmp.Equal(x, y)
})

// shadowKey reports an unknown key that differs only in case from a JSON
// field name of struct type typ.
func shadowKey[M ~map[string]json.RawMessage](extra M, typ reflect.Type) (string, bool) {
	for k := range extra {
		for i := range typ.NumField() {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			if name != "" && name != "-" && name != k && strings.EqualFold(name, k) {
				return k, true
			}
		}
	}
	return "", false
}

// FuzzTaskDecode decodes arbitrary task files. Decoding must never panic;
// a task that decodes has a valid status and an id, re-encodes, and
// decodes again to the same task; encoding is then stable.
func FuzzTaskDecode(f *testing.F) {
	f.Add([]byte(`{"id":"1","subject":"s","status":"pending","blocks":[],"blockedBy":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var t1 tasklist.Task
		if err := json.Unmarshal(data, &t1); err != nil {
			return
		}
		if k, ok := shadowKey(t1.Extra, reflect.TypeFor[tasklist.Task]()); ok {
			t.Fatalf("unknown key %q shadows a field (differs only in case); a rewrite would let it override the field", k)
		}
		if t1.ID == "" || !t1.Status.Valid() {
			t.Fatalf("decode(%q) = {ID %q, Status %q}; want an id and a valid status", data, t1.ID, t1.Status)
		}
		b1, err := json.Marshal(t1)
		if err != nil {
			t.Fatalf("encode decoded task %q: %v", data, err)
		}
		var t2 tasklist.Task
		if err := json.Unmarshal(b1, &t2); err != nil {
			t.Fatalf("decode re-encoded task %s (from %q): %v", b1, data, err)
		}
		if diff := cmp.Diff(t1, t2, rawEqual, cmpEmpty); diff != "" {
			t.Fatalf("decode(encode(decode(%q))) mismatch (-want +got):\n%s", data, diff)
		}
		b2, err := json.Marshal(t2)
		if err != nil || !bytes.Equal(b1, b2) {
			t.Fatalf("encoding not stable:\n%s\n%s (%v)", b1, b2, err)
		}
	})
}
