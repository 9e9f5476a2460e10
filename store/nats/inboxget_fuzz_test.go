package nats

import (
	"errors"
	"fmt"
	"testing"

	natsgo "github.com/nats-io/nats.go"
)

// FuzzParseDirectReply: the answers to a batched direct get come from the
// server (or anything answering on its subject). Whatever the header
// block and data, parsing never panics; what it accepts is an end (no
// sequence, no subject) or a message with a positive sequence and a
// subject, and a message's headers written back parse the same.
func FuzzParseDirectReply(f *testing.F) {
	for _, seed := range []struct{ hdr, data string }{
		{"NATS/1.0\r\nNats-Stream: t_v1_mail\r\nNats-Subject: t.mail.crew.ann.x\r\nNats-Sequence: 7\r\nNats-Time-Stamp: 2026-12-05T00:00:00Z\r\nNats-Num-Pending: 2\r\nNats-Last-Sequence: 5\r\n\r\n", `{"from":"bob","text":"hi","msg_id":"x"}`},
		{"NATS/1.0\r\nNats-Msg-Id: a.b.c\r\nNats-Stream: s\r\nNats-Subject: a.b\r\nNats-Sequence: 1\r\nNats-Num-Pending: 0\r\n\r\n", `{}`},
		{"NATS/1.0 204 EOB\r\nNats-Num-Pending: 0\r\nNats-Last-Sequence: 9\r\n\r\n", ""},
		{"NATS/1.0 204 EOB\r\nNats-Num-Pending: 12\r\nNats-Last-Sequence: 9\r\n\r\n", ""},
		{"NATS/1.0 404 Message Not Found\r\n\r\n", ""},
		{"NATS/1.0 404 No Results\r\n\r\n", ""},
		{"NATS/1.0 408 Request Timeout\r\n\r\n", ""},
		{"NATS/1.0 503\r\n\r\n", ""},
		{"NATS/1.0 413 Too Many Results\r\n\r\n", ""},
		{"NATS/1.0\r\nNats-Subject: a\r\nNats-Sequence: 3\r\n\r\n", "old server"},
		{"NATS/1.0\r\nNats-Subject: a\r\nNats-Sequence: 0\r\nNats-Num-Pending: 1\r\n\r\n", ""},
		{"NATS/1.0\r\nNats-Subject: a\r\nNats-Sequence: -3\r\nNats-Num-Pending: 1\r\n\r\n", ""},
		{"NATS/1.0\r\nNats-Sequence: 3\r\nNats-Num-Pending: 1\r\n\r\n", ""},
		{"NATS/1.0\r\nNats-Subject: a\r\nNats-Sequence: 99999999999999999999\r\nNats-Num-Pending: 1\r\n\r\n", ""},
		{"NATS/1.0 204 EOB\r\n\r\n", ""},
		{"NATS/1.0\r\n\r\n", ""},
		{"garbage", ""},
	} {
		f.Add([]byte(seed.hdr), []byte(seed.data))
	}
	f.Fuzz(func(t *testing.T, hdr, data []byte) {
		h, err := natsgo.DecodeHeadersMsg(hdr)
		if err != nil {
			return // nats.go refuses the message before we see it
		}
		r, err := parseDirectReply(h, data)
		if err != nil {
			if r.end || r.seq != 0 || r.subject != "" || r.data != nil || r.pending != 0 {
				t.Fatalf("parseDirectReply(%q) = %+v with error %v; want nothing", hdr, r, err)
			}
			return
		}
		if r.end {
			if r.seq != 0 || r.subject != "" || r.data != nil {
				t.Fatalf("parseDirectReply(%q): an end with a message: %+v", hdr, r)
			}
			return
		}
		if r.seq == 0 || r.subject == "" {
			t.Fatalf("parseDirectReply(%q) accepted a message without sequence or subject: %+v", hdr, r)
		}
		again := fmt.Appendf(nil, "NATS/1.0\r\nNats-Subject: %s\r\nNats-Sequence: %d\r\nNats-Num-Pending: %d\r\n\r\n", r.subject, r.seq, r.pending)
		h2, err := natsgo.DecodeHeadersMsg(again)
		if err != nil {
			return // a subject nats.go would not carry in a header line
		}
		r2, err := parseDirectReply(h2, data)
		if err != nil || r2.seq != r.seq || r2.pending != r.pending || r2.subject != r.subject {
			t.Fatalf("%+v written back as %q parses as %+v, %v", r, again, r2, err)
		}
	})
}

// TestParseDirectReply: what each kind of answer reads as; a server
// without batches, or no direct get responder, sends the read to a
// consumer (errNoDirect), any other refusal is an error of its own.
func TestParseDirectReply(t *testing.T) {
	tests := []struct {
		name, hdr string
		want      directReply
		noDirect  bool
		err       bool
	}{
		{name: "message", hdr: "NATS/1.0\r\nNats-Subject: a.b\r\nNats-Sequence: 7\r\nNats-Num-Pending: 2\r\n\r\n", want: directReply{seq: 7, subject: "a.b", pending: 2}},
		{name: "end of batch", hdr: "NATS/1.0 204 EOB\r\nNats-Num-Pending: 3\r\nNats-Last-Sequence: 7\r\n\r\n", want: directReply{end: true, pending: 3}},
		{name: "nothing", hdr: "NATS/1.0 404 No Results\r\n\r\n", want: directReply{end: true}},
		{name: "no batches (2.10)", hdr: "NATS/1.0\r\nNats-Subject: a.b\r\nNats-Sequence: 7\r\n\r\n", noDirect: true},
		{name: "no responders", hdr: "NATS/1.0 503\r\n\r\n", noDirect: true},
		{name: "refused", hdr: "NATS/1.0 400 Bad Request\r\n\r\n", noDirect: true},
		{name: "timeout", hdr: "NATS/1.0 408 Request Timeout\r\n\r\n", err: true},
		{name: "sequence 0", hdr: "NATS/1.0\r\nNats-Subject: a.b\r\nNats-Sequence: 0\r\nNats-Num-Pending: 2\r\n\r\n", err: true},
		{name: "no subject", hdr: "NATS/1.0\r\nNats-Sequence: 7\r\nNats-Num-Pending: 2\r\n\r\n", err: true},
		{name: "end without pending", hdr: "NATS/1.0 204 EOB\r\n\r\n", err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := natsgo.DecodeHeadersMsg([]byte(tt.hdr))
			if err != nil {
				t.Fatal(err)
			}
			got, err := parseDirectReply(h, nil)
			switch {
			case tt.noDirect || tt.err:
				if err == nil || errors.Is(err, errNoDirect) != tt.noDirect {
					t.Errorf("parseDirectReply(%q) error %v; want an error, errNoDirect %v", tt.hdr, err, tt.noDirect)
				}
			case err != nil:
				t.Errorf("parseDirectReply(%q) error %v", tt.hdr, err)
			case got.end != tt.want.end || got.seq != tt.want.seq || got.subject != tt.want.subject || got.pending != tt.want.pending:
				t.Errorf("parseDirectReply(%q) = %+v; want %+v", tt.hdr, got, tt.want)
			}
		})
	}
}
