package mailbox

import (
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
	extra, err := jsonx.Split(data, messageKeys...)
	if err != nil {
		return fmt.Errorf("inbox entry: %w", err)
	}
	var raw map[string]json.RawMessage
	_ = json.Unmarshal(data, &raw) // valid: Split succeeded
	var w wireMessage
	for _, f := range []struct {
		key      string
		dst      any
		required bool
	}{
		{"from", &w.From, true}, {"text", &w.Text, true}, {"timestamp", &w.Timestamp, true},
		{"summary", &w.Summary, false}, {"color", &w.Color, false}, {"msg_id", &w.ID, false},
		{"type", &w.Type, false}, {"read", &w.Read, false}, {"msgV", &w.MsgV, false},
	} {
		v, ok := raw[f.key]
		if !ok || string(v) == "null" {
			if f.required {
				return fmt.Errorf("inbox entry: %s: missing", f.key)
			}
			continue
		}
		if err := json.Unmarshal(v, f.dst); err != nil {
			return fmt.Errorf("inbox entry: %s: wrong type (%s)", f.key, abbrev(v))
		}
	}
	ts, err := time.Parse(time.RFC3339Nano, w.Timestamp)
	if err != nil {
		return fmt.Errorf("inbox entry: timestamp: %q is not an ISO-8601 time", w.Timestamp)
	}
	if y := ts.UTC().Year(); y < 0 || y > 9999 {
		return fmt.Errorf("inbox entry: timestamp: %q is outside years 0000-9999", w.Timestamp)
	}
	typ := w.Type
	if typ == "" {
		typ = "message"
	}
	*m = Message{ID: w.ID, From: w.From, Text: w.Text, Summary: w.Summary, Color: w.Color,
		Timestamp: ts, Read: w.Read, Type: typ, Extra: extra}
	return nil
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
