package mailbox

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/troupe-dev/troupe/internal/jsonx"
)

// Broadcast is the recipient that addresses every member but the sender.
const Broadcast = "*"

// TimeLayout is the timestamp format on disk: ISO-8601 with milliseconds, UTC.
const TimeLayout = "2006-01-02T15:04:05.000Z07:00"

// MaxTextLen bounds a message's text, in bytes.
const MaxTextLen = 1 << 20

// MaxSummaryLen bounds a summary; longer ones are cut, not refused.
const MaxSummaryLen = 200

// Message is one inbox entry.
type Message struct {
	ID        string    // msg_id, a UUID
	From      string    // sender's name
	Text      string    // plain text or an encoded Frame
	Summary   string    // optional short preview
	Color     string    // optional sender color
	Timestamp time.Time // when it was sent
	Read      bool
	Type      string // "message" unless another writer said otherwise

	// Extra keeps the keys this type does not model (lead_sig, from_plugin, ...).
	Extra jsonx.Extra
}

var messageKeys = []string{"from", "text", "summary", "timestamp", "color", "msgV", "msg_id", "type", "read"}

type wireMessage struct {
	From      string `json:"from"`
	Text      string `json:"text"`
	Summary   string `json:"summary,omitempty"`
	Timestamp string `json:"timestamp"`
	Color     string `json:"color,omitempty"`
	MsgV      int    `json:"msgV,omitempty"`
	ID        string `json:"msg_id,omitempty"`
	Type      string `json:"type,omitempty"`
	Read      bool   `json:"read"`
}

// MarshalJSON encodes m as an inbox entry, stamping msgV 1.
func (m Message) MarshalJSON() ([]byte, error) {
	typ := m.Type
	if typ == "" {
		typ = "message"
	}
	b, err := json.Marshal(wireMessage{
		From: m.From, Text: m.Text, Summary: m.Summary,
		Timestamp: m.Timestamp.UTC().Format(TimeLayout),
		Color:     m.Color, MsgV: 1, ID: m.ID, Type: typ, Read: m.Read,
	})
	if err != nil {
		return nil, err
	}
	return jsonx.Join(b, m.Extra, messageKeys...)
}

// UnmarshalJSON decodes an inbox entry. from, text and timestamp are
// required strings; the error names the field that is wrong.
func (m *Message) UnmarshalJSON(data []byte) error {
	// One pass into a map: the known keys are decoded from their raw
	// values (exact names, as Claude Code reads them), the rest kept.
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("inbox entry: %w", err)
	}
	if raw == nil {
		return fmt.Errorf("inbox entry: want a JSON object, got null")
	}
	msg, err := DecodeEntry(raw)
	if err != nil {
		return err
	}
	*m = msg
	return nil
}

// DecodeEntry builds a Message from an inbox entry already split into its
// keys (which it consumes: the map is emptied of the keys it models). It
// is UnmarshalJSON without the first parse, for readers that decode a
// whole inbox in one pass.
func DecodeEntry(raw map[string]json.RawMessage) (Message, error) {
	var w wireMessage
	for _, f := range []struct {
		key      string
		str      *string
		required bool
	}{
		{"from", &w.From, true}, {"text", &w.Text, true}, {"timestamp", &w.Timestamp, true},
		{"summary", &w.Summary, false}, {"color", &w.Color, false}, {"msg_id", &w.ID, false},
		{"type", &w.Type, false},
	} {
		v, ok := raw[f.key]
		delete(raw, f.key)
		if !ok || string(v) == "null" {
			if f.required {
				return Message{}, fmt.Errorf("inbox entry: %s: missing", f.key)
			}
			continue
		}
		s, ok := rawString(v)
		if !ok {
			return Message{}, fmt.Errorf("inbox entry: %s: wrong type (%s)", f.key, abbrev(v))
		}
		*f.str = s
	}
	if v, ok := raw["read"]; ok {
		delete(raw, "read")
		switch string(v) {
		case "true":
			w.Read = true
		case "false", "null":
		default:
			return Message{}, fmt.Errorf("inbox entry: read: wrong type (%s)", abbrev(v))
		}
	}
	if v, ok := raw["msgV"]; ok {
		delete(raw, "msgV")
		if string(v) != "null" && json.Unmarshal(v, &w.MsgV) != nil {
			return Message{}, fmt.Errorf("inbox entry: msgV: wrong type (%s)", abbrev(v))
		}
	}
	ts, err := time.Parse(time.RFC3339Nano, w.Timestamp)
	if err != nil {
		return Message{}, fmt.Errorf("inbox entry: timestamp: %q is not an ISO-8601 time", w.Timestamp)
	}
	if y := ts.UTC().Year(); y < 0 || y > 9999 {
		return Message{}, fmt.Errorf("inbox entry: timestamp: %q is outside years 0000-9999", w.Timestamp)
	}
	typ := w.Type
	if typ == "" {
		typ = "message"
	}
	var extra jsonx.Extra
	if len(raw) > 0 {
		extra = make(jsonx.Extra, len(raw))
		for k, v := range raw {
			extra[k] = v
		}
		extra.Compact()
	}
	return Message{ID: w.ID, From: w.From, Text: w.Text, Summary: w.Summary, Color: w.Color,
		Timestamp: ts, Read: w.Read, Type: typ, Extra: extra}, nil
}

// rawString decodes a JSON string, without a second validation pass when
// it holds no escapes.
func rawString(v json.RawMessage) (string, bool) {
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' && bytes.IndexByte(v, '\\') < 0 {
		return string(v[1 : len(v)-1]), true
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

// NewID returns a random (version 4) UUID for a message.
func NewID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("mailbox: crypto/rand: %v", err)) // never fails on supported platforms
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// Prepare validates m for sending and fills what the sender may leave out:
// ID (a new UUID), Timestamp (now), Type ("message"); Read is cleared and a
// long summary is cut.
func Prepare(m Message, now time.Time) (Message, error) {
	if m.From == "" {
		return m, fmt.Errorf("message: from: empty sender name")
	}
	if len(m.Text) > MaxTextLen {
		return m, fmt.Errorf("message: text: %d bytes, more than the %d allowed", len(m.Text), MaxTextLen)
	}
	for _, f := range []struct{ name, v string }{{"from", m.From}, {"text", m.Text}, {"summary", m.Summary}, {"color", m.Color}} {
		if !utf8.ValidString(f.v) {
			// Stored as JSON it would be silently replaced by U+FFFD.
			return m, fmt.Errorf("message: %s: not valid UTF-8", f.name)
		}
	}
	if m.ID == "" {
		m.ID = NewID()
	}
	if m.Timestamp.IsZero() {
		m.Timestamp = now
	}
	m.Timestamp = m.Timestamp.UTC().Truncate(time.Millisecond)
	if y := m.Timestamp.Year(); y < 0 || y > 9999 {
		return m, fmt.Errorf("message: timestamp: year %d is outside 0000-9999", y)
	}
	if m.Type == "" {
		m.Type = "message"
	}
	if len(m.Summary) > MaxSummaryLen {
		cut := MaxSummaryLen
		for cut > 0 && !utf8.RuneStart(m.Summary[cut]) {
			cut--
		}
		m.Summary = m.Summary[:cut]
	}
	m.Read = false
	m.Extra = m.Extra.Clone()
	return m, nil
}

func abbrev(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	return string(b)
}
