package mailbox

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Lead signatures (docs/protocol.md section 4.3). A lead that starts a pane
// teammate makes an Ed25519 key pair, passes the public half as
// --lead-verify-key <epochMs>.<base64url DER SPKI>, and signs every entry
// it writes into that teammate's inbox: lead_sig is the base64url
// signature over the UTF-8 JSON of
//
//	["claude-team-lead-entry-v1", msg_id, from, timestamp, text, summary|null, color|null, from_plugin|null]
//
// A teammate started with a key treats an entry that claims to come from
// team-lead, user or system as forged when the signature is missing or
// wrong: it shows it with verified="false", and does not act on it when it
// is a protocol frame.

// LeadSigKey is the inbox entry key (in Message.Extra) of a lead signature.
const LeadSigKey = "lead_sig"

// leadSigContext is the first element of the signed array.
const leadSigContext = "claude-team-lead-entry-v1"

// ed25519SPKIPrefix is the DER of an Ed25519 SubjectPublicKeyInfo up to the
// key bytes (RFC 8410): SEQUENCE { SEQUENCE { OID 1.3.101.112 } BIT STRING }.
var ed25519SPKIPrefix = []byte{0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00}

var (
	// ErrUnsigned reports an entry without a lead_sig.
	ErrUnsigned = errors.New("mailbox: entry has no lead signature")
	// ErrBadSignature reports a lead_sig that is malformed or does not
	// verify against the lead's key.
	ErrBadSignature = errors.New("mailbox: lead signature does not verify")
)

// LeadKeyError reports a --lead-verify-key value that cannot be used.
type LeadKeyError struct {
	Value  string // the value as given (cut when long)
	Reason string
}

func (e *LeadKeyError) Error() string {
	return fmt.Sprintf("lead verify key %q: %s (want <epochMs>.<base64url DER of an Ed25519 public key>)", e.Value, e.Reason)
}

// SignatureError reports why an entry's lead signature was refused. It
// matches ErrUnsigned or ErrBadSignature.
type SignatureError struct {
	MsgID  string
	From   string
	Reason string
	Err    error // ErrUnsigned or ErrBadSignature
}

func (e *SignatureError) Error() string {
	return fmt.Sprintf("message %s from %q: %s", e.MsgID, e.From, e.Reason)
}

func (e *SignatureError) Unwrap() error { return e.Err }

// LeadVerifyKey is the public key a teammate checks lead entries with, as
// passed by --lead-verify-key.
type LeadVerifyKey struct {
	Created time.Time // the epochMs prefix: when the lead made the key
	Key     ed25519.PublicKey
}

// ParseLeadVerifyKey parses a --lead-verify-key value. It returns a
// *LeadKeyError naming what is wrong.
func ParseLeadVerifyKey(s string) (LeadVerifyKey, error) {
	bad := func(format string, args ...any) (LeadVerifyKey, error) {
		v := s
		if len(v) > 120 {
			v = v[:120] + "..."
		}
		return LeadVerifyKey{}, &LeadKeyError{Value: v, Reason: fmt.Sprintf(format, args...)}
	}
	if s == "" {
		return bad("empty")
	}
	ms, enc, ok := strings.Cut(s, ".")
	if !ok {
		return bad("no '.' between the epoch milliseconds and the key")
	}
	if ms == "" || strings.TrimLeft(ms, "0123456789") != "" {
		return bad("epoch milliseconds %q is not a decimal number", ms)
	}
	n, err := strconv.ParseInt(ms, 10, 64)
	if err != nil || n > 253402300799999 { // 9999-12-31T23:59:59.999Z
		return bad("epoch milliseconds %s is out of range", ms)
	}
	der, err := decodeBase64URL(enc)
	if err != nil {
		return bad("key is not base64url: %v", err)
	}
	if len(der) != len(ed25519SPKIPrefix)+ed25519.PublicKeySize {
		return bad("key is %d bytes of DER; an Ed25519 SubjectPublicKeyInfo is %d", len(der), len(ed25519SPKIPrefix)+ed25519.PublicKeySize)
	}
	if !bytes.HasPrefix(der, ed25519SPKIPrefix) {
		return bad("key is not an Ed25519 SubjectPublicKeyInfo (DER header %x)", der[:len(ed25519SPKIPrefix)])
	}
	key := ed25519.PublicKey(bytes.Clone(der[len(ed25519SPKIPrefix):]))
	return LeadVerifyKey{Created: time.UnixMilli(n).UTC(), Key: key}, nil
}

// String returns k as a --lead-verify-key value.
func (k LeadVerifyKey) String() string {
	der := append(bytes.Clone(ed25519SPKIPrefix), k.Key...)
	return strconv.FormatInt(k.Created.UnixMilli(), 10) + "." + base64.RawURLEncoding.EncodeToString(der)
}

// Verify checks m's lead_sig against k. It returns nil when the signature
// verifies, else a *SignatureError matching ErrUnsigned (no lead_sig) or
// ErrBadSignature (malformed, or signed by another key or over other
// content).
func (k LeadVerifyKey) Verify(m Message) error {
	fail := func(err error, format string, args ...any) error {
		return &SignatureError{MsgID: m.ID, From: m.From, Reason: fmt.Sprintf(format, args...), Err: err}
	}
	if len(k.Key) != ed25519.PublicKeySize {
		return fail(ErrBadSignature, "lead verify key has %d bytes, want %d", len(k.Key), ed25519.PublicKeySize)
	}
	raw, ok := m.Extra[LeadSigKey]
	if !ok || string(raw) == "null" {
		return fail(ErrUnsigned, "no %s", LeadSigKey)
	}
	var enc string
	if err := json.Unmarshal(raw, &enc); err != nil {
		return fail(ErrBadSignature, "%s is not a string", LeadSigKey)
	}
	if enc == "" {
		return fail(ErrUnsigned, "empty %s", LeadSigKey)
	}
	sig, err := decodeBase64URL(enc)
	if err != nil {
		return fail(ErrBadSignature, "%s is not base64url: %v", LeadSigKey, err)
	}
	if len(sig) != ed25519.SignatureSize {
		return fail(ErrBadSignature, "%s is %d bytes, an Ed25519 signature is %d", LeadSigKey, len(sig), ed25519.SignatureSize)
	}
	payload, err := LeadSignedPayload(m)
	if err != nil {
		return fail(ErrBadSignature, "%v", err)
	}
	if !ed25519.Verify(k.Key, payload, sig) {
		return fail(ErrBadSignature, "%s does not verify against the lead's key", LeadSigKey)
	}
	return nil
}

// LeadSigner signs the entries a lead writes into a pane teammate's inbox.
// It is safe for concurrent use.
type LeadSigner struct {
	priv   ed25519.PrivateKey
	verify LeadVerifyKey
}

// NewLeadSigner makes a fresh key pair, stamped with now (the epochMs of
// the verify key).
func NewLeadSigner(now time.Time) (*LeadSigner, error) {
	seed := make([]byte, ed25519.SeedSize)
	if _, err := rand.Read(seed); err != nil {
		return nil, fmt.Errorf("lead signer: %w", err)
	}
	return LeadSignerFromSeed(seed, now)
}

// LeadSignerFromSeed returns the signer of the Ed25519 key with that
// 32-byte seed, stamped with created (for tests and known-answer vectors).
func LeadSignerFromSeed(seed []byte, created time.Time) (*LeadSigner, error) {
	if len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("lead signer: seed is %d bytes, want %d", len(seed), ed25519.SeedSize)
	}
	priv := ed25519.NewKeyFromSeed(seed)
	return &LeadSigner{
		priv:   priv,
		verify: LeadVerifyKey{Created: created.UTC().Truncate(time.Millisecond), Key: priv.Public().(ed25519.PublicKey)},
	}, nil
}

// VerifyKey returns the public half, to pass as --lead-verify-key.
func (s *LeadSigner) VerifyKey() LeadVerifyKey { return s.verify }

// Sign returns m with lead_sig set in its Extra (a copy; m's own Extra is
// not modified). m must be ready to write: an id, a sender and a
// timestamp, as Prepare leaves it.
func (s *LeadSigner) Sign(m Message) (Message, error) {
	if m.ID == "" || m.From == "" || m.Timestamp.IsZero() {
		return m, fmt.Errorf("lead signer: message needs an id, a sender and a timestamp before signing (got id %q, from %q)", m.ID, m.From)
	}
	payload, err := LeadSignedPayload(m)
	if err != nil {
		return m, fmt.Errorf("lead signer: %w", err)
	}
	sig, err := json.Marshal(base64.RawURLEncoding.EncodeToString(ed25519.Sign(s.priv, payload)))
	if err != nil {
		return m, err
	}
	m.Extra = m.Extra.Clone()
	if m.Extra == nil {
		m.Extra = make(map[string]json.RawMessage, 1)
	}
	m.Extra[LeadSigKey] = sig
	return m, nil
}

// LeadSignedPayload returns the bytes a lead signature covers: the JSON of
// ["claude-team-lead-entry-v1", msg_id, from, timestamp, text,
// summary|null, color|null, from_plugin|null] written as JavaScript's
// JSON.stringify writes it. The timestamp is m.Timestamp in TimeLayout (as
// JavaScript's toISOString writes it); an empty summary or color, and an
// absent from_plugin, are null. Invalid UTF-8 is replaced byte by byte with
// U+FFFD, as it is once the entry is written and read back.
func LeadSignedPayload(m Message) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('[')
	quote(&b, leadSigContext)
	for _, s := range []string{m.ID, m.From, m.Timestamp.UTC().Format(TimeLayout), m.Text} {
		b.WriteByte(',')
		quote(&b, validUTF8(s))
	}
	for _, s := range []string{m.Summary, m.Color} {
		b.WriteByte(',')
		if s == "" {
			b.WriteString("null")
		} else {
			quote(&b, validUTF8(s))
		}
	}
	b.WriteByte(',')
	switch raw, ok := m.Extra["from_plugin"]; {
	case !ok || string(raw) == "null":
		b.WriteString("null")
	default:
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("from_plugin is not a string: %s", abbrev(raw))
		}
		quote(&b, s)
	}
	b.WriteByte(']')
	return b.Bytes(), nil
}

// leadOnlySenders are the sender names a teammate trusts only with a valid
// lead signature.
var leadOnlySenders = map[string]bool{"team-lead": true, "user": true, "system": true}

// protocolKinds are the frame types of docs/protocol.md section 6.6 that are
// recognised as protocol (never plain text).
var protocolKinds = map[string]bool{
	"permission_request": true, "permission_response": true,
	"sandbox_permission_request": true, "sandbox_permission_response": true,
	"shutdown_request": true, "shutdown_response": true, "shutdown_approved": true,
	"team_permission_update": true, "mode_set_request": true,
	"plan_approval_request": true, "plan_approval_response": true,
}

// ProtocolKind returns the type of the protocol frame text carries (one
// of docs/protocol.md section 6.6's list), or "" when text is not one.
func ProtocolKind(text string) string {
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, "{") {
		return ""
	}
	var head struct {
		Type json.RawMessage `json:"type"`
	}
	if json.Unmarshal([]byte(t), &head) != nil {
		return ""
	}
	var kind string
	if json.Unmarshal(head.Type, &kind) != nil || !protocolKinds[kind] {
		return ""
	}
	return kind
}

// Forged reports whether a teammate started with key must treat m as
// forged: m claims to come from team-lead, user or system and its lead
// signature is missing or wrong. The reason is the *SignatureError. With a
// nil key (no --lead-verify-key) nothing is forged. A forged message is
// shown to the model with verified="false", plain text included (observed
// with Claude Code 2.1.328); a forged protocol frame (ProtocolKind) is in
// addition not acted on.
func Forged(key *LeadVerifyKey, m Message) (bool, error) {
	if key == nil || !leadOnlySenders[m.From] {
		return false, nil
	}
	if err := key.Verify(m); err != nil {
		return true, err
	}
	return false, nil
}

// decodeBase64URL decodes base64url with or without padding.
func decodeBase64URL(s string) ([]byte, error) {
	return base64.RawURLEncoding.Strict().DecodeString(strings.TrimRight(s, "="))
}

// validUTF8 replaces every byte of s that is not part of valid UTF-8 with
// U+FFFD, as encoding/json does.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}
