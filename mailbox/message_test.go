package mailbox_test

import (
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/team"
)

// observedEntry is an inbox entry as docs/protocol.md section 4 shows it.
const observedEntry = `{
  "from": "helper",
  "text": "plain text",
  "summary": "a short preview",
  "timestamp": "2026-12-02T13:13:36.880Z",
  "color": "blue",
  "from_plugin": "my-plugin",
  "msgV": 1,
  "msg_id": "11272d22-15ad-4b15-a8a3-8153be7c5b7c",
  "type": "message",
  "read": false,
  "lead_sig": "c2lnbmF0dXJl"
}`

func TestMessageDecodeObserved(t *testing.T) {
	var m mailbox.Message
	if err := json.Unmarshal([]byte(observedEntry), &m); err != nil {
		t.Fatalf("decode observed entry: %v", err)
	}
	want := mailbox.Message{
		ID: "11272d22-15ad-4b15-a8a3-8153be7c5b7c", From: "helper", Text: "plain text", Summary: "a short preview",
		Color: "blue", Timestamp: time.Date(2026, 12, 2, 13, 13, 36, 880_000_000, time.UTC), Type: "message",
		Extra: map[string]json.RawMessage{"from_plugin": json.RawMessage(`"my-plugin"`), "lead_sig": json.RawMessage(`"c2lnbmF0dXJl"`)},
	}
	if diff := cmp.Diff(want, m); diff != "" {
		t.Errorf("decoded entry mismatch (-want +got):\n%s", diff)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	var orig, round map[string]any
	_ = json.Unmarshal([]byte(observedEntry), &orig)
	if err := json.Unmarshal(b, &round); err != nil {
		t.Fatalf("encoded entry is not JSON: %v", err)
	}
	if diff := cmp.Diff(orig, round); diff != "" {
		t.Errorf("re-encoded entry differs (-orig +encoded):\n%s", diff)
	}
}

func TestMessageEncode(t *testing.T) {
	m := mailbox.Message{
		ID: "id-1", From: "team-lead", Text: "hi",
		Timestamp: time.Date(2026, 12, 2, 14, 13, 36, 880_999_999, time.FixedZone("CET", 3600)),
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"from": "team-lead", "text": "hi", "timestamp": "2026-12-02T13:13:36.880Z",
		"msgV": float64(1), "msg_id": "id-1", "type": "message", "read": false,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("encoded entry %s mismatch (-want +got):\n%s", b, diff)
	}
	m.Read, m.Type, m.Summary, m.Color = true, "custom", "s", "red"
	m.Timestamp = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	b, _ = json.Marshal(m)
	for _, frag := range []string{`"read":true`, `"type":"custom"`, `"summary":"s"`, `"color":"red"`, `"timestamp":"2026-01-02T03:04:05.000Z"`} {
		if !strings.Contains(string(b), frag) {
			t.Errorf("encoded entry %s lacks %s", b, frag)
		}
	}
}

func TestMessageDecode(t *testing.T) {
	tests := []struct {
		name, in string
		want     mailbox.Message
	}{
		{"legacy entry without msgV, msg_id and type", `{"from":"a","text":"t","timestamp":"2026-12-02T13:13:36.880Z","read":true}`,
			mailbox.Message{From: "a", Text: "t", Timestamp: time.Date(2026, 12, 2, 13, 13, 36, 880_000_000, time.UTC), Read: true, Type: "message"}},
		{"null optional fields", `{"from":"a","text":"","timestamp":"2026-12-02T13:13:36Z","summary":null,"read":null,"type":null}`,
			mailbox.Message{From: "a", Timestamp: time.Date(2026, 12, 2, 13, 13, 36, 0, time.UTC), Type: "message"}},
		{"offset timestamp", `{"from":"a","text":"t","timestamp":"2026-12-02T14:13:36.5+01:00"}`,
			mailbox.Message{From: "a", Text: "t", Timestamp: time.Date(2026, 12, 2, 13, 13, 36, 500_000_000, time.UTC), Type: "message"}},
	}
	for _, tt := range tests {
		var got mailbox.Message
		if err := json.Unmarshal([]byte(tt.in), &got); err != nil {
			t.Errorf("decode %s: %v", tt.name, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("decode %s mismatch (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestMessageDecodeErrors(t *testing.T) {
	const ts = `"timestamp":"2026-12-02T13:13:36.880Z"`
	tests := []struct {
		name, in, field string
	}{
		{"missing from", `{"text":"t",` + ts + `}`, "from"},
		{"null from", `{"from":null,"text":"t",` + ts + `}`, "from"},
		{"missing text", `{"from":"a",` + ts + `}`, "text"},
		{"missing timestamp", `{"from":"a","text":"t"}`, "timestamp"},
		{"from number", `{"from":5,"text":"t",` + ts + `}`, "from"},
		{"text bool", `{"from":"a","text":true,` + ts + `}`, "text"},
		{"timestamp number", `{"from":"a","text":"t","timestamp":1796217213228}`, "timestamp"},
		{"timestamp not a time", `{"from":"a","text":"t","timestamp":"yesterday"}`, "timestamp"},
		{"read string", `{"from":"a","text":"t",` + ts + `,"read":"yes"}`, "read"},
		{"msg_id number", `{"from":"a","text":"t",` + ts + `,"msg_id":7}`, "msg_id"},
		{"summary object", `{"from":"a","text":"t",` + ts + `,"summary":{}}`, "summary"},
		{"array", `[]`, ""},
		{"not JSON", `{`, ""},
	}
	for _, tt := range tests {
		var m mailbox.Message
		err := json.Unmarshal([]byte(tt.in), &m)
		if err == nil {
			t.Errorf("decode %s (%s) succeeded; want an error", tt.name, tt.in)
			continue
		}
		if !strings.Contains(err.Error(), tt.field) {
			t.Errorf("decode %s error = %q; want it to name %q", tt.name, err, tt.field)
		}
	}
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestNewID(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := mailbox.NewID()
		if !uuidRE.MatchString(id) {
			t.Fatalf("NewID() = %q; want a lowercase version 4 UUID", id)
		}
		if seen[id] {
			t.Fatalf("NewID() repeated %q", id)
		}
		seen[id] = true
	}
}

func TestPrepare(t *testing.T) {
	now := time.Date(2026, 12, 2, 14, 13, 36, 880_999_999, time.FixedZone("CET", 3600))
	nowMS := time.Date(2026, 12, 2, 13, 13, 36, 880_000_000, time.UTC)
	given := time.Date(2025, 1, 1, 0, 0, 0, 123_456_789, time.UTC)
	long := strings.Repeat("s", mailbox.MaxSummaryLen+50)
	tests := []struct {
		name string
		in   mailbox.Message
		want mailbox.Message // ID "*" means "any fresh UUID"
	}{
		{"fills defaults", mailbox.Message{From: "a", Text: "t", Read: true},
			mailbox.Message{ID: "*", From: "a", Text: "t", Timestamp: nowMS, Type: "message"}},
		{"keeps what was given", mailbox.Message{ID: "mine", From: "a", Text: "t", Timestamp: given, Type: "custom", Summary: "s", Color: "red"},
			mailbox.Message{ID: "mine", From: "a", Text: "t", Timestamp: given.Truncate(time.Millisecond), Type: "custom", Summary: "s", Color: "red"}},
		{"cuts a long summary", mailbox.Message{From: "a", Text: "t", Summary: long},
			mailbox.Message{ID: "*", From: "a", Text: "t", Timestamp: nowMS, Type: "message", Summary: long[:mailbox.MaxSummaryLen]}},
	}
	for _, tt := range tests {
		got, err := mailbox.Prepare(tt.in, now)
		if err != nil {
			t.Errorf("Prepare(%s) error: %v", tt.name, err)
			continue
		}
		if tt.want.ID == "*" {
			if !uuidRE.MatchString(got.ID) {
				t.Errorf("Prepare(%s).ID = %q; want a fresh UUID", tt.name, got.ID)
			}
			tt.want.ID = got.ID
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Prepare(%s) mismatch (-want +got):\n%s", tt.name, diff)
		}
		if got.Timestamp.Location() != time.UTC {
			t.Errorf("Prepare(%s).Timestamp location = %v; want UTC", tt.name, got.Timestamp.Location())
		}
	}

	extra := map[string]json.RawMessage{"lead_sig": json.RawMessage(`"x"`)}
	got, err := mailbox.Prepare(mailbox.Message{From: "a", Text: "t", Extra: extra}, now)
	if err != nil {
		t.Fatal(err)
	}
	extra["lead_sig"][1] = 'Y'
	if string(got.Extra["lead_sig"]) != `"x"` {
		t.Errorf("Prepare shares Extra with its input: got %s after changing the input", got.Extra["lead_sig"])
	}

	refused := []struct {
		name, field string
		in          mailbox.Message
	}{
		{"empty sender", "from", mailbox.Message{Text: "t"}},
		{"text too long", "text", mailbox.Message{From: "a", Text: strings.Repeat("x", mailbox.MaxTextLen+1)}},
	}
	for _, tt := range refused {
		if _, err := mailbox.Prepare(tt.in, now); err == nil || !strings.Contains(err.Error(), tt.field) {
			t.Errorf("Prepare(%s) error = %v; want an error naming %q", tt.name, err, tt.field)
		}
	}
}

func TestRecipients(t *testing.T) {
	if team.LeadName != "team-lead" {
		t.Fatalf("team.LeadName is %q; mailbox.Recipients puts \"team-lead\" last", team.LeadName)
	}
	roster := []string{"team-lead", "alice", "bob"}
	tests := []struct {
		from, to string
		want     []string
		unknown  bool
	}{
		{"alice", "bob", []string{"bob"}, false},
		{"alice", "alice", []string{"alice"}, false},
		// The lead's copy of a broadcast is stored last.
		{"alice", mailbox.Broadcast, []string{"bob", "team-lead"}, false},
		{"user", mailbox.Broadcast, []string{"alice", "bob", "team-lead"}, false},
		{"team-lead", mailbox.Broadcast, []string{"alice", "bob"}, false},
		{"alice", "carol", nil, true},
		{"alice", "Bob", nil, true},
		{"alice", "", nil, true},
	}
	for _, tt := range tests {
		got, err := mailbox.Recipients("crew", roster, tt.from, tt.to)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Recipients(%q -> %q) mismatch (-want +got):\n%s", tt.from, tt.to, diff)
		}
		var ue *mailbox.UnknownRecipientError
		if isUnknown := errors.As(err, &ue); isUnknown != tt.unknown {
			t.Errorf("Recipients(%q -> %q) error = %v; want unknown=%v", tt.from, tt.to, err, tt.unknown)
			continue
		}
		if tt.unknown {
			if ue.Name != tt.to || ue.Team != "crew" || !cmp.Equal(ue.Valid, roster) || !errors.Is(err, mailbox.ErrUnknownRecipient) {
				t.Errorf("Recipients(%q -> %q) error = %#v; want it to name %q, crew and the roster", tt.from, tt.to, ue, tt.to)
			}
		}
	}
	_, err := mailbox.Recipients("crew", roster, "alice", "Bob")
	if !strings.Contains(err.Error(), `did you mean "bob"`) {
		t.Errorf("error for Bob = %q; want a hint naming bob", err)
	}
	// Valid must not alias the caller's roster.
	var ue *mailbox.UnknownRecipientError
	errors.As(err, &ue)
	ue.Valid[0] = "changed"
	if roster[0] != "team-lead" {
		t.Errorf("UnknownRecipientError.Valid aliases the roster")
	}
}

func TestCorruptError(t *testing.T) {
	parse := errors.New("unexpected end of JSON input")
	err := error(&mailbox.CorruptError{Team: "crew", Agent: "bob", MovedTo: "/x/bob.json.corrupt", Err: parse})
	if !errors.Is(err, mailbox.ErrCorrupt) || !errors.Is(err, parse) {
		t.Errorf("CorruptError matches ErrCorrupt %v, its cause %v; want both", errors.Is(err, mailbox.ErrCorrupt), errors.Is(err, parse))
	}
	for _, s := range []string{"bob", "crew", "/x/bob.json.corrupt"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("CorruptError text %q lacks %q", err, s)
		}
	}
}
