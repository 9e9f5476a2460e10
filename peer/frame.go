package peer

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// MaxFrame bounds a frame's JSON in bytes.
const MaxFrame = 256 << 10

// The types of Frame.
const (
	FrameMessage = "message" // a Message for the session
	FrameReply   = "reply"   // the answer: OK, or Error
)

// Frame is one unit on a session's socket (or a bridge subject): a
// message, or the reply to one.
type Frame struct {
	Type    string   `json:"type"`
	Message *Message `json:"message,omitempty"`
	OK      bool     `json:"ok,omitempty"`
	Error   string   `json:"error,omitempty"`
}

// FrameError is the error of a frame that cannot be read or is not valid.
type FrameError struct{ Reason string }

func (e *FrameError) Error() string { return "peer: bad frame: " + e.Reason }

// Validate checks f's shape: a known type, and for a message, a valid one.
func (f Frame) Validate() error {
	switch f.Type {
	case FrameMessage:
		if f.Message == nil {
			return &FrameError{"message frame without a message"}
		}
		if err := f.Message.Validate(); err != nil {
			return &FrameError{err.Error()}
		}
	case FrameReply:
		if f.Message != nil {
			return &FrameError{"reply frame with a message"}
		}
	default:
		return &FrameError{fmt.Sprintf("unknown frame type %q", f.Type)}
	}
	return nil
}

// WriteFrame writes f to w: its length, then its JSON.
func WriteFrame(w io.Writer, f Frame) error {
	b, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("peer: encode frame: %w", err)
	}
	if len(b) > MaxFrame {
		return &FrameError{fmt.Sprintf("frame is %d bytes, more than %d", len(b), MaxFrame)}
	}
	buf := make([]byte, 4+len(b))
	binary.BigEndian.PutUint32(buf, uint32(len(b)))
	copy(buf[4:], b)
	_, err = w.Write(buf)
	return err
}

// ReadFrame reads one frame from r and validates it. A length over
// MaxFrame is refused before anything more is read; unknown fields,
// trailing data and invalid messages are refused (*FrameError).
func ReadFrame(r io.Reader) (Frame, error) {
	var head [4]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return Frame{}, err
	}
	n := binary.BigEndian.Uint32(head[:])
	if n > MaxFrame {
		return Frame{}, &FrameError{fmt.Sprintf("frame is %d bytes, more than %d", n, MaxFrame)}
	}
	if n == 0 {
		return Frame{}, &FrameError{"empty frame"}
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return Frame{}, err
	}
	return DecodeFrame(b)
}

// DecodeFrame decodes and validates one frame's JSON (a bridge message's
// body, or what ReadFrame read).
func DecodeFrame(b []byte) (Frame, error) {
	if len(b) > MaxFrame {
		return Frame{}, &FrameError{fmt.Sprintf("frame is %d bytes, more than %d", len(b), MaxFrame)}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var f Frame
	if err := dec.Decode(&f); err != nil {
		return Frame{}, &FrameError{"invalid JSON: " + err.Error()}
	}
	if dec.More() {
		return Frame{}, &FrameError{"data after the frame's JSON"}
	}
	if err := f.Validate(); err != nil {
		return Frame{}, err
	}
	return f, nil
}
