package nats

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// FuzzDecodeReadState: read marks come from the server, written by any
// client. Decoding never panics, accepts only well-formed marks, and what
// it accepts re-encodes to marks that decode the same.
func FuzzDecodeReadState(f *testing.F) {
	for _, seed := range []string{
		`{"read":[]}`,
		`{"read":[{"seq":1,"id":"a"},{"seq":7,"id":"0c8f6a8e-7d2c-4a51-9a0e-1f2a3b4c5d6e"}]}`,
		`{"read":[{"seq":2,"id":"a"},{"seq":1,"id":"b"}]}`,
		`{"read":[{"seq":0,"id":"a"}]}`,
		`{"read":[{"seq":1,"id":""}]}`,
		`{"read":null}`,
		`{"read":[{"seq":-1,"id":"a"}]}`,
		`{"read":[{"seq":1,"id":"a","x":1}]}`,
		`{"read":[]} {}`,
		`[]`, `null`, ``, `{`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		marks, err := decodeReadState(data)
		if err != nil {
			if marks != nil {
				t.Fatalf("decodeReadState(%q) = %v with error %v; want no marks", data, marks, err)
			}
			return
		}
		for i, m := range marks {
			if m.Seq == 0 || m.ID == "" || (i > 0 && marks[i-1].Seq >= m.Seq) {
				t.Fatalf("decodeReadState(%q) accepted bad mark %d: %+v", data, i, m)
			}
		}
		again, err := decodeReadState(encodeReadState(marks))
		if err != nil || !slices.Equal(again, marks) {
			t.Fatalf("re-decoding %v = %v, %v; want the same marks", marks, again, err)
		}
	})
}

// FuzzToken: every name maps to one valid subject token and KV key
// segment that decodes back to it, and untoken refuses what token cannot
// produce.
func FuzzToken(f *testing.F) {
	for _, seed := range []string{"bob", "team-lead", "a.b", "*", ">", "", " ", "=", "=MFRGG", "ü", "a\x00b", "=AB", "=mfrgg"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tok := token(s)
		if tok == "" || strings.ContainsAny(tok, ". *>\t\r\n") {
			t.Fatalf("token(%q) = %q; not a single subject token", s, tok)
		}
		for _, c := range []byte(tok) {
			if !bytes.ContainsRune([]byte("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-="), rune(c)) {
				t.Fatalf("token(%q) = %q; byte %q is not allowed in a KV key", s, tok, c)
			}
		}
		back, err := untoken(tok)
		if err != nil || back != s {
			t.Fatalf("untoken(token(%q)) = %q, %v; want the name back", s, back, err)
		}
		// s read as a token: if untoken accepts it, token must give it back.
		if name, err := untoken(s); err == nil && token(name) != s {
			t.Fatalf("untoken(%q) = %q but token(%q) = %q; two tokens for one name", s, name, name, token(name))
		}
	})
}
