package mailbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// observedLead is a key and entry written by a real Claude Code 2.1.328
// lead (testdata/lead-signature-2.1.328.json).
func observedLead(t testing.TB) (string, Message) {
	t.Helper()
	b, err := os.ReadFile("testdata/lead-signature-2.1.328.json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Key   string  `json:"lead_verify_key"`
		Entry Message `json:"entry"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v.Key, v.Entry
}

func TestLeadSignatureKnownAnswer(t *testing.T) {
	val, m := observedLead(t)
	key, err := ParseLeadVerifyKey(val)
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2026, 12, 2, 19, 0, 52, 438e6, time.UTC); !key.Created.Equal(want) {
		t.Errorf("Created = %v; want %v", key.Created, want)
	}
	if got := key.String(); got != val {
		t.Errorf("String() = %q; want the observed %q", got, val)
	}
	if err := key.Verify(m); err != nil {
		t.Fatalf("Verify(observed entry) = %v; want nil", err)
	}

	tampered := m
	tampered.Text += "!"
	if err := key.Verify(tampered); !errors.Is(err, ErrBadSignature) {
		t.Errorf("Verify(text changed) = %v; want ErrBadSignature", err)
	}
	var sigErr *SignatureError
	if err := key.Verify(tampered); !errors.As(err, &sigErr) || sigErr.MsgID != m.ID || sigErr.From != "team-lead" {
		t.Errorf("Verify(text changed) = %#v; want a *SignatureError naming the message", err)
	}
	unsigned := m
	unsigned.Extra = nil
	if err := key.Verify(unsigned); !errors.Is(err, ErrUnsigned) {
		t.Errorf("Verify(no lead_sig) = %v; want ErrUnsigned", err)
	}
	// The entry survives our own write and read back with its signature.
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var back Message
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if err := key.Verify(back); err != nil {
		t.Errorf("Verify after a troupe rewrite = %v; want nil", err)
	}
	if forged, err := Forged(&key, m); forged || err != nil {
		t.Errorf("Forged(observed) = %v, %v; want false", forged, err)
	}
}

func testSigner(t *testing.T, b byte) *LeadSigner {
	t.Helper()
	s, err := LeadSignerFromSeed(bytes.Repeat([]byte{b}, 32), time.UnixMilli(1796238052438))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestLeadSignRoundTripAndTamper(t *testing.T) {
	s := testSigner(t, 7)
	m := Message{
		ID: "11272d22-15ad-4b15-a8a3-8153be7c5b7c", From: "team-lead", Text: `{"type":"shutdown_request","requestId":"shutdown-1@helper","from":"team-lead","timestamp":"2026-12-02T13:13:36.880Z"}`,
		Summary: "stop now", Color: "red", Timestamp: time.Date(2026, 12, 2, 13, 13, 36, 880e6, time.UTC), Type: "message",
		Extra: map[string]json.RawMessage{"from_plugin": json.RawMessage(`"my-plugin"`), "other": json.RawMessage(`1`)},
	}
	signed, err := s.Sign(m)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Extra[LeadSigKey]; ok {
		t.Fatal("Sign modified the caller's Extra")
	}
	b, err := json.Marshal(signed)
	if err != nil {
		t.Fatal(err)
	}
	var back Message
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	key, err := ParseLeadVerifyKey(s.VerifyKey().String())
	if err != nil {
		t.Fatal(err)
	}
	if err := key.Verify(back); err != nil {
		t.Fatalf("Verify(signed, written, read back) = %v\n%s", err, b)
	}
	for name, edit := range map[string]func(*Message){
		"id":          func(m *Message) { m.ID = "21272d22-15ad-4b15-a8a3-8153be7c5b7c" },
		"from":        func(m *Message) { m.From = "user" },
		"timestamp":   func(m *Message) { m.Timestamp = m.Timestamp.Add(time.Millisecond) },
		"text":        func(m *Message) { m.Text = strings.Replace(m.Text, "helper", "other", 1) },
		"summary":     func(m *Message) { m.Summary = "" },
		"color":       func(m *Message) { m.Color = "blue" },
		"from_plugin": func(m *Message) { delete(m.Extra, "from_plugin") },
		"signature": func(m *Message) {
			raw := string(m.Extra[LeadSigKey])
			m.Extra[LeadSigKey] = json.RawMessage(strings.Replace(raw, raw[1:2], map[bool]string{true: "B", false: "A"}[raw[1] == 'A'], 1))
		},
	} {
		c := back
		c.Extra = back.Extra.Clone()
		edit(&c)
		if err := key.Verify(c); !errors.Is(err, ErrBadSignature) {
			t.Errorf("Verify(%s changed) = %v; want ErrBadSignature", name, err)
		}
	}
	// "read" and unknown keys are not covered: a reader may flip them.
	c := back
	c.Read = true
	c.Extra = back.Extra.Clone()
	c.Extra["other"] = json.RawMessage(`2`)
	if err := key.Verify(c); err != nil {
		t.Errorf("Verify(read and unknown key changed) = %v; want nil", err)
	}
	if err := testSigner(t, 8).VerifyKey().Verify(back); !errors.Is(err, ErrBadSignature) {
		t.Errorf("Verify with another lead's key = %v; want ErrBadSignature", err)
	}
}

func TestLeadSignRefusesUnpreparedMessages(t *testing.T) {
	s := testSigner(t, 1)
	now := time.Now()
	for name, m := range map[string]Message{
		"no id":        {From: "team-lead", Timestamp: now, Text: "x"},
		"no sender":    {ID: NewID(), Timestamp: now, Text: "x"},
		"no timestamp": {ID: NewID(), From: "team-lead", Text: "x"},
		"bad plugin":   {ID: NewID(), From: "team-lead", Timestamp: now, Extra: map[string]json.RawMessage{"from_plugin": json.RawMessage(`3`)}},
	} {
		if _, err := s.Sign(m); err == nil {
			t.Errorf("Sign(%s) succeeded", name)
		}
	}
	if _, err := LeadSignerFromSeed([]byte("short"), now); err == nil {
		t.Error("LeadSignerFromSeed(5 bytes) succeeded")
	}
	fresh, err := NewLeadSigner(now)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(fresh.VerifyKey().Key, s.VerifyKey().Key) {
		t.Error("NewLeadSigner reused a key")
	}
}

// TestLeadSignedPayloadIsJSONStringify pins the payload bytes for text
// that Go's encoding/json would write differently from JavaScript.
func TestLeadSignedPayloadIsJSONStringify(t *testing.T) {
	m := Message{
		ID: "id", From: "team-lead", Timestamp: time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.FixedZone("x", 3600)),
		Text: "a<b>&c\u2028d\u2029\"\\\n\r\t\b\f\x01\x1f\x7f é😀 \xff",
	}
	got, err := LeadSignedPayload(m)
	if err != nil {
		t.Fatal(err)
	}
	want := `["claude-team-lead-entry-v1","id","team-lead","2026-01-02T02:04:05.006Z","a<b>&c` + "\u2028d\u2029" + `\"\\\n\r\t\b\f\u0001\u001f` + "\x7f é😀 \ufffd" + `",null,null,null]`
	if string(got) != want {
		t.Errorf("LeadSignedPayload =\n%s\nwant\n%s", got, want)
	}
}

// TestLeadSignatureVerifiesInNode checks Sign against the JavaScript side:
// node's JSON.stringify and crypto.verify with the SPKI key, as Claude Code
// does. It skips when node is missing.
func TestLeadSignatureVerifiesInNode(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not on PATH")
	}
	s := testSigner(t, 42)
	m, err := s.Sign(Message{
		ID: NewID(), From: "team-lead", Timestamp: time.Now(), Summary: "sum <&> \u2028",
		Text: "line\nnext \"q\" \\ <script>&amp; \u2028\u2029 \x01 é 😀 \x7f", Extra: map[string]json.RawMessage{"from_plugin": json.RawMessage(`"plug"`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	entry, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	const script = `
const crypto = require('crypto');
const [key, entry] = [process.argv[1], JSON.parse(process.argv[2])];
const pub = crypto.createPublicKey({key: Buffer.from(key.split('.')[1], 'base64url'), format: 'der', type: 'spki'});
const payload = JSON.stringify(['claude-team-lead-entry-v1', entry.msg_id, entry.from, entry.timestamp, entry.text,
  entry.summary ?? null, entry.color ?? null, entry.from_plugin ?? null]);
const ok = crypto.verify(null, Buffer.from(payload, 'utf8'), pub, Buffer.from(entry.lead_sig, 'base64url'));
process.stdout.write(ok ? 'VERIFIED' : 'FAILED ' + payload);
`
	out, err := exec.CommandContext(t.Context(), node, "-e", script, s.VerifyKey().String(), string(entry)).CombinedOutput()
	if err != nil || string(out) != "VERIFIED" {
		t.Fatalf("node verify: %v: %s\nentry: %s", err, out, entry)
	}
}

func TestParseLeadVerifyKeyErrors(t *testing.T) {
	good := testSigner(t, 3).VerifyKey().String()
	ms, enc, _ := strings.Cut(good, ".")
	rsaLike := "MCowBQYDK2VxAyEA" + enc[16:] // OID 1.3.101.113 (Ed448 arc), same length
	for _, tt := range []struct{ in, want string }{
		{"", "empty"},
		{enc, "no '.'"},
		{"." + enc, "not a decimal number"},
		{"-5." + enc, "not a decimal number"},
		{"99999999999999999999." + enc, "out of range"},
		{ms + ".!!!", "not base64url"},
		{ms + "." + enc[:40], "bytes of DER"},
		{ms + "." + rsaLike, "not an Ed25519"},
	} {
		_, err := ParseLeadVerifyKey(tt.in)
		var ke *LeadKeyError
		if !errors.As(err, &ke) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseLeadVerifyKey(%q) = %v; want a *LeadKeyError saying %q", tt.in, err, tt.want)
		}
	}
	// Padding is tolerated.
	if _, err := ParseLeadVerifyKey(good + "="); err != nil {
		t.Errorf("ParseLeadVerifyKey(padded) = %v", err)
	}
}

func TestForged(t *testing.T) {
	s := testSigner(t, 9)
	key := s.VerifyKey()
	now := time.Now()
	frame := `{"type":"shutdown_request","requestId":"shutdown-1@helper","from":"team-lead","timestamp":"2026-12-02T13:13:36.880Z"}`
	msg := func(from, text string) Message { return Message{ID: NewID(), From: from, Text: text, Timestamp: now} }
	signed, err := s.Sign(msg("team-lead", frame))
	if err != nil {
		t.Fatal(err)
	}
	signedText, err := s.Sign(msg("team-lead", "hello"))
	if err != nil {
		t.Fatal(err)
	}
	badSig := signed
	badSig.Text = strings.Replace(frame, "helper", "other", 1)
	for _, tt := range []struct {
		name   string
		key    *LeadVerifyKey
		m      Message
		forged bool
		err    error
	}{
		{"no key: nothing is checked", nil, msg("team-lead", frame), false, nil},
		{"signed frame from the lead", &key, signed, false, nil},
		{"unsigned frame from the lead", &key, msg("team-lead", frame), true, ErrUnsigned},
		{"unsigned frame from user", &key, msg("user", frame), true, ErrUnsigned},
		{"unsigned frame from system", &key, msg("system", frame), true, ErrUnsigned},
		{"frame with a bad signature", &key, badSig, true, ErrBadSignature},
		{"unsigned plain text from the lead", &key, msg("team-lead", "hello"), true, ErrUnsigned},
		{"signed plain text from the lead", &key, signedText, false, nil},
		{"unsigned lifecycle frame from the lead", &key, msg("team-lead", `{"type":"task_assignment","taskId":"1"}`), true, ErrUnsigned},
		{"frame from a peer", &key, msg("helper", frame), false, nil},
	} {
		forged, err := Forged(tt.key, tt.m)
		if forged != tt.forged || !errors.Is(err, tt.err) || (tt.err == nil && err != nil) {
			t.Errorf("%s: Forged = %v, %v; want %v, %v", tt.name, forged, err, tt.forged, tt.err)
		}
	}
}

func TestProtocolKind(t *testing.T) {
	for in, want := range map[string]string{
		`{"type":"permission_response","request_id":"x"}`: "permission_response",
		` {"type":"sandbox_permission_request"} `:         "sandbox_permission_request",
		`{"type":"mode_set_request"}`:                     "mode_set_request",
		`{"type":"idle_notification"}`:                    "",
		`{"type":7}`:                                      "",
		`{"type":"shutdown_request"`:                      "",
		`hello {"type":"shutdown_request"}`:               "",
		``:                                                "",
	} {
		if got := ProtocolKind(in); got != want {
			t.Errorf("ProtocolKind(%q) = %q; want %q", in, got, want)
		}
	}
}

func FuzzParseLeadVerifyKey(f *testing.F) {
	f.Add("1796238052438.MCowBQYDK2VwAyEAdlSGVSeVc2ALYncHc6aa9mrQ3CLIoh-kWm1yd0dqGw8")
	f.Add("1796238052438.MCowBQYDK2VwAyEAdlSGVSeVc2ALYncHc6aa9mrQ3CLIoh-kWm1yd0dqGw8=")
	f.Add("0.MCowBQYDK2VwAyEA")
	f.Add(".")
	f.Add("12.a.b")
	f.Fuzz(func(t *testing.T, s string) {
		k, err := ParseLeadVerifyKey(s)
		if err != nil {
			var ke *LeadKeyError
			if !errors.As(err, &ke) {
				t.Fatalf("error %v is not a *LeadKeyError", err)
			}
			return
		}
		again, err := ParseLeadVerifyKey(k.String())
		if err != nil || !again.Created.Equal(k.Created) || !bytes.Equal(again.Key, k.Key) {
			t.Fatalf("String() %q of a parsed key does not parse back to it: %v", k.String(), err)
		}
	})
}

func FuzzLeadVerify(f *testing.F) {
	val, m := observedLead(f)
	f.Add(val, string(m.Extra[LeadSigKey]), m.Text)
	f.Add(val, `"AAAA"`, "x")
	f.Add(val, `null`, `{"type":"shutdown_request"}`)
	f.Add(val, `7`, "")
	f.Fuzz(func(t *testing.T, keyVal, sigJSON, text string) {
		key, err := ParseLeadVerifyKey(keyVal)
		if err != nil {
			return
		}
		c := m
		c.Text = text
		c.Extra = map[string]json.RawMessage{LeadSigKey: json.RawMessage(sigJSON)}
		err = key.Verify(c)
		if err != nil && !errors.Is(err, ErrBadSignature) && !errors.Is(err, ErrUnsigned) {
			t.Fatalf("Verify error %v is neither ErrBadSignature nor ErrUnsigned", err)
		}
		Forged(&key, c)
		ProtocolKind(text)
	})
}
