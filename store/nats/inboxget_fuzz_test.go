package nats

import (
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
