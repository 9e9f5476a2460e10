package nats

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Reading an inbox by batched direct gets.
//
// An inbox read created an ephemeral consumer (a JetStream API request
// the stream's leader applies), fetched from it and deleted it: three
// requests of the server's JetStream API per read, in a team of a
// thousand on every wake. Now one request to $JS.API.DIRECT.GET.<stream>,
// {"seq": first, "next_by_subj": "<inbox>.*", "batch": n}, is answered by
// up to n messages of the inbox in stream order, each with the headers
// Nats-Sequence, Nats-Subject and Nats-Num-Pending, then by an end of
// batch (status 204, with Nats-Num-Pending: the messages left), or by a
// status 404 when there is nothing from first on. It needs a stream that
// allows direct gets (setup.go) on a server of 2.11 or later; from a
// server whose answer lacks Nats-Num-Pending (one that ignores "batch"),
// or when nobody answers direct gets, the inbox is read through a
// consumer as before (scanInboxOnce).

// errNoDirect says that the server did not answer a batched direct get
// as one: read through a consumer instead.
var errNoDirect = errors.New("no batched direct get")

// Headers of a direct get's answer that nats.go does not name: an inline
// status line is read into Status and Description.
const (
	statusHeader     = "Status"
	descrHeader      = "Description"
	numPendingHeader = "Nats-Num-Pending"
)

// directMaxBytes bounds the bytes of one batch's answer (the server ends a
// batch early past it; the read asks again for the rest).
const directMaxBytes = 4 << 20

// directBatchSize is how many messages one direct get asks for
// (scanBatch; tests make it small to read in several batches), and
// byConsumer makes reads go through a consumer as before (to compare the
// two in benchmarks).
var (
	directBatchSize atomic.Int32
	byConsumer      atomic.Bool
)

func init() { directBatchSize.Store(scanBatch) }

// directReq is a batched direct get request.
type directReq struct {
	Seq      uint64 `json:"seq,omitempty"`
	NextFor  string `json:"next_by_subj"`
	Batch    int    `json:"batch"`
	MaxBytes int    `json:"max_bytes,omitempty"`
}

// directReply is one message of the answer to a batched direct get.
type directReply struct {
	// end is set for the answer's last message: an end of batch, or
	// nothing found (pending 0).
	end bool
	// pending is, for a message, how many match after it; for an end of
	// batch, how many are left after the batch.
	pending uint64
	seq     uint64 // a message's stream sequence (> 0)
	subject string // a message's subject
	data    []byte
}

// parseDirectReply reads one message of a batched direct get's answer
// from its headers (nats.go puts an inline status line into Status and
// Description) and data. A status other than 204 and 404 is an error
// naming it; a message without Nats-Num-Pending means the server does
// not do batches, and 503 (no responders) or 400 (a request refused) that
// direct gets cannot be used (errNoDirect); a missing or malformed sequence or
// subject is an error naming the header.
func parseDirectReply(h natsgo.Header, data []byte) (directReply, error) {
	switch status := h.Get(statusHeader); status {
	case "":
	case "204": // end of batch
		np, err := headerUint(h, numPendingHeader)
		if err != nil {
			return directReply{}, fmt.Errorf("direct get end of batch: %w", err)
		}
		return directReply{end: true, pending: np}, nil
	case "404": // nothing (more) from the sequence asked
		return directReply{end: true}, nil
	case "503":
		return directReply{}, fmt.Errorf("direct get: %w: %w", errNoDirect, natsgo.ErrNoResponders)
	case "400":
		// A server that refuses the request's form (not seen: 2.10
		// ignores "batch"): the consumer still reads the inbox.
		return directReply{}, fmt.Errorf("direct get: status 400 %q: %w", h.Get(descrHeader), errNoDirect)
	default:
		return directReply{}, fmt.Errorf("direct get: status %s %q", status, h.Get(descrHeader))
	}
	if h.Get(numPendingHeader) == "" {
		return directReply{}, fmt.Errorf("direct get: answer without %s: %w", numPendingHeader, errNoDirect)
	}
	np, err := headerUint(h, numPendingHeader)
	if err != nil {
		return directReply{}, fmt.Errorf("direct get: %w", err)
	}
	seq, err := headerUint(h, jetstream.SequenceHeader)
	if err == nil && seq == 0 {
		err = fmt.Errorf("header %s: sequence 0", jetstream.SequenceHeader)
	}
	if err != nil {
		return directReply{}, fmt.Errorf("direct get: %w", err)
	}
	subj := h.Get(jetstream.SubjectHeader)
	if subj == "" {
		return directReply{}, fmt.Errorf("direct get: message %d without header %s", seq, jetstream.SubjectHeader)
	}
	return directReply{pending: np, seq: seq, subject: subj, data: data}, nil
}

// headerUint parses header key as a decimal unsigned integer.
func headerUint(h natsgo.Header, key string) (uint64, error) {
	v := h.Get(key)
	if v == "" {
		return 0, fmt.Errorf("header %s missing", key)
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("header %s: %q is not a sequence number", key, v)
	}
	return n, nil
}

// scanInboxDirect returns every entry of an inbox from stream sequence
// from on, in stream order, by batched direct gets. Entries deleted during
// the read are skipped; a sequence that does not grow is an error.
func (s *Store) scanInboxDirect(ctx context.Context, teamName, agent string, from uint64) ([]rawMsg, error) {
	if byConsumer.Load() {
		return nil, errNoDirect
	}
	filter := s.inboxSubject(teamName, agent) + ".*"
	var out []rawMsg
	next := from
	for {
		got, left, err := s.directBatch(ctx, filter, next)
		if err != nil {
			return nil, err
		}
		for _, r := range got {
			if r.seq < next {
				return nil, fmt.Errorf("direct get: message %d after asking from %d", r.seq, next)
			}
			next = r.seq + 1
		}
		out = append(out, got...)
		if left == 0 || len(got) == 0 {
			return out, nil
		}
	}
}

// directBatch asks for up to scanBatch messages on filter from sequence
// first, and returns them and how many are left after them.
func (s *Store) directBatch(ctx context.Context, filter string, first uint64) ([]rawMsg, uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, attemptTimeout)
	defer cancel()
	batch := int(directBatchSize.Load())
	var out []rawMsg
	var left uint64
	err := s.directGet(ctx, s.mailStream, directReq{Seq: first, NextFor: filter, Batch: batch, MaxBytes: directMaxBytes}, batch+1, func(m *natsgo.Msg) (bool, error) {
		r, err := parseDirectReply(m.Header, m.Data)
		if err != nil || r.end {
			left = r.pending
			return true, err
		}
		out = append(out, rawMsg{seq: r.seq, subject: r.subject, data: r.data})
		return false, nil
	})
	if err != nil {
		return nil, 0, fmt.Errorf("direct get of %s: %w", filter, err)
	}
	return out, left, nil
}

// directGet sends req to stream's direct get API and hands each message
// of the answer to each until it says the answer is done (or fails).
// room is the most messages the answer may hold: the channel they arrive
// on holds them all, so that none is dropped (a synchronous subscription
// made a channel of 65,536).
func (s *Store) directGet(ctx context.Context, stream string, req any, room int, each func(*natsgo.Msg) (done bool, err error)) error {
	b, err := json.Marshal(req)
	if err != nil {
		return err
	}
	inbox := s.nc.NewRespInbox()
	ch := make(chan *natsgo.Msg, room)
	sub, err := s.nc.ChanSubscribe(inbox, ch)
	if err != nil {
		return err
	}
	defer sub.Unsubscribe()
	if err := s.nc.PublishRequest("$JS.API.DIRECT.GET."+stream, inbox, b); err != nil {
		return err
	}
	for {
		select {
		case m := <-ch:
			if done, err := each(m); done || err != nil {
				return err
			}
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// sinceReq asks a direct get for the first message on a subject from a
// sequence on.
type sinceReq struct {
	Seq     uint64 `json:"seq"`
	NextFor string `json:"next_by_subj"`
}

// kvChangedSince reports whether key of kv has been written (put, deleted
// or purged) after revision rev, by asking a direct get for the key's
// first message after rev: status 404 means none. Any replica may answer,
// as it may a KV Get. An answer that is neither a message nor a 404 is an
// error: the caller reads the entry instead.
func (s *Store) kvChangedSince(ctx context.Context, kv jetstream.KeyValue, key string, rev uint64) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, attemptTimeout)
	defer cancel()
	req, err := json.Marshal(sinceReq{Seq: rev + 1, NextFor: kvSubject(kv, key)})
	if err != nil {
		return false, err
	}
	m, err := s.nc.RequestWithContext(ctx, "$JS.API.DIRECT.GET.KV_"+kv.Bucket(), req)
	if err != nil {
		return false, fmt.Errorf("direct get of %s after %d: %w", key, rev, err)
	}
	switch status := m.Header.Get(statusHeader); status {
	case "404":
		return false, nil
	case "":
		seq, err := headerUint(m.Header, jetstream.SequenceHeader)
		if err != nil {
			return false, fmt.Errorf("direct get of %s after %d: %w", key, rev, err)
		}
		if seq <= rev {
			return false, fmt.Errorf("direct get of %s after %d: answered with message %d", key, rev, seq)
		}
		return true, nil
	default:
		return false, fmt.Errorf("direct get of %s after %d: status %s %q", key, rev, status, m.Header.Get(descrHeader))
	}
}
