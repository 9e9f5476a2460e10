package mailbox_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/troupe-dev/troupe/mailbox"
)

// rawEqual compares raw JSON by meaning: encoding/json compacts and
// HTML-escapes raw values when it re-encodes them.
var rawEqual = cmp.Comparer(func(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	return cmp.Equal(x, y)
})

// FuzzMessageDecode decodes arbitrary inbox entries. Decoding must never
// panic; an entry that decodes must re-encode, and decoding that gives the
// same message (timestamps cut to the millisecond, in UTC, as on disk).
// Encoding is then stable.
func FuzzMessageDecode(f *testing.F) {
	f.Add([]byte(`{"from":"a","text":"t","timestamp":"2026-12-02T13:13:36.880Z"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var m1 mailbox.Message
		if err := json.Unmarshal(data, &m1); err != nil {
			return
		}
		b1, err := json.Marshal(m1)
		if err != nil {
			t.Fatalf("encode decoded entry %q: %v", data, err)
		}
		var m2 mailbox.Message
		if err := json.Unmarshal(b1, &m2); err != nil {
			t.Fatalf("decode re-encoded entry %s (from %q): %v", b1, data, err)
		}
		want := m1
		want.Timestamp = m1.Timestamp.UTC().Truncate(time.Millisecond)
		if diff := cmp.Diff(want, m2, rawEqual); diff != "" {
			t.Fatalf("decode(encode(decode(%q))) mismatch (-want +got):\n%s", data, diff)
		}
		b2, err := json.Marshal(m2)
		if err != nil || !bytes.Equal(b1, b2) {
			t.Fatalf("encoding not stable:\n%s\n%s (%v)", b1, b2, err)
		}
	})
}

// FuzzFrameDecode decodes arbitrary message texts. Decode must never panic;
// a text that is not a known frame comes back unchanged as Text; a frame
// re-encodes with its "type" and decodes to the same frame.
func FuzzFrameDecode(f *testing.F) {
	f.Add(`{"type":"shutdown_request","requestId":"r","from":"team-lead","timestamp":"t"}`)
	f.Fuzz(func(t *testing.T, text string) {
		if line := mailbox.Line(text); line == "" && text != "" {
			t.Fatalf("Line(%q) is empty", text)
		}
		fr, err := mailbox.Decode(text)
		if err != nil {
			if fr != nil {
				t.Fatalf("Decode(%q) = %#v with error %v; want nil with an error", text, fr, err)
			}
			return
		}
		if txt, ok := fr.(mailbox.Text); ok {
			if string(txt) != text {
				t.Fatalf("Decode(%q) = Text(%q); want the input unchanged", text, txt)
			}
			return
		}
		enc, err := mailbox.Encode(fr)
		if err != nil {
			t.Fatalf("Encode(Decode(%q)) error: %v", text, err)
		}
		var head struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal([]byte(enc), &head); err != nil || head.Type != fr.Kind() {
			t.Fatalf("Encode(%#v) = %s; want JSON with type %q (%v)", fr, enc, fr.Kind(), err)
		}
		back, err := mailbox.Decode(enc)
		if err != nil {
			t.Fatalf("Decode(Encode(Decode(%q))) error: %v", text, err)
		}
		if diff := cmp.Diff(fr, back, rawEqual); diff != "" {
			t.Fatalf("frame round trip of %q mismatch (-want +got):\n%s", text, diff)
		}
		if enc2, err := mailbox.Encode(back); err != nil || enc2 != enc {
			t.Fatalf("encoding not stable:\n%s\n%s (%v)", enc, enc2, err)
		}
	})
}
