package nats

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// How a command survives a server restart.
//
// A request sent just before the connection drops is never answered: its
// reply is lost with the server. Every request therefore runs as an attempt
// that ends when the connection is lost (or after attemptTimeout, for a
// server that stops answering without closing the connection), and a
// transient failure is retried, with backoff, until the command's own
// deadline (RequestTimeout, or SendTimeout for Send). A command whose server
// is back within its deadline succeeds.
//
// A retried write may find that its earlier attempt did land (the request
// reached the server; only the reply was lost): the key then exists, or is
// past the expected revision. The KV wrapper reads the key back and counts
// the write as done when it holds exactly the bytes written, so a retry
// neither fails with a false conflict nor writes twice.

// errConnLost ends an attempt whose connection dropped.
var errConnLost = errors.New("nats connection lost")

// errStalled ends a scan whose consumer stopped delivering for
// attemptTimeout: in a cluster, the server holding it died while the
// client stayed connected to another one.
var errStalled = errors.New("no progress from the server")

// connLost returns a channel closed when the current connection drops.
func (s *Store) connLost() <-chan struct{} {
	s.connMu.Lock()
	defer s.connMu.Unlock()
	if s.lost == nil {
		s.lost = make(chan struct{})
	}
	return s.lost
}

// disconnected closes the channel of the connection that dropped, and
// starts the outage (outage.go).
func (s *Store) disconnected() {
	s.connMu.Lock()
	defer s.connMu.Unlock()
	if s.lost == nil {
		s.lost = make(chan struct{})
	}
	select {
	case <-s.lost:
	default:
		close(s.lost)
	}
	if s.back == nil {
		s.back = make(chan struct{})
		s.downAt = time.Now()
	}
}

// reconnected starts a fresh channel for the new connection and ends the
// outage; it returns how long the outage lasted.
func (s *Store) reconnected() time.Duration {
	s.connMu.Lock()
	defer s.connMu.Unlock()
	select {
	case <-s.lost:
		s.lost = make(chan struct{})
	default:
	}
	var down time.Duration
	if s.back != nil {
		close(s.back)
		s.back = nil
		down = time.Since(s.downAt)
		s.downAt = time.Time{}
	}
	return down
}

// retry runs f until it succeeds, fails for good, or ctx ends. Each attempt
// gets a ctx that ends when the connection drops or, if timeout > 0, after
// timeout. A transient failure (see transient) is retried after a backoff;
// retries are logged. f learns its attempt number, counted from 1.
func (s *Store) retry(ctx context.Context, what string, timeout time.Duration, f func(ctx context.Context, attempt int) error) error {
	for attempt := 1; ; attempt++ {
		err, lost := s.attempt(ctx, timeout, func(actx context.Context) error { return f(actx, attempt) })
		if err == nil {
			if attempt > 1 {
				s.log.Info("nats store: succeeded after retries", "op", what, "attempts", attempt)
			}
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%d attempts, last: %v: %w", attempt, err, context.Cause(ctx))
		}
		if !lost && !transient(err) {
			return err
		}
		if s.outage() != nil {
			// Said once for the outage ("waiting for the store").
			s.log.Debug("nats store: disconnected; retrying", "op", what, "attempt", attempt, "err", err)
		} else {
			s.log.Warn("nats store: no answer from the server; retrying", "op", what, "attempt", attempt, "err", err)
		}
		t := time.NewTimer(backoff(attempt, time.Second))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%d attempts, last: %v: %w", attempt, err, context.Cause(ctx))
		}
	}
}

// attempt runs f once with a ctx that ends with ctx, when the connection
// drops, or after timeout (if > 0); lost reports a dropped connection.
func (s *Store) attempt(ctx context.Context, timeout time.Duration, f func(context.Context) error) (err error, lost bool) {
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if timeout > 0 {
		var stop context.CancelFunc
		actx, stop = context.WithTimeout(actx, timeout)
		defer stop()
	}
	gone := s.connLost()
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-gone:
			cancel(errConnLost)
		case <-done:
		}
	}()
	err = f(actx)
	return err, err != nil && errors.Is(context.Cause(actx), errConnLost)
}

// transient reports whether a failed request may succeed when retried.
func transient(err error) bool {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		return apiErr.Code == 503 || apiErr.Code == 408
	}
	// KV watches (and so scans) still go through nats.go's older
	// JetStream API, whose errors are its own type: "JetStream system
	// temporarily unavailable" while a cluster elects its meta leader.
	var oldErr *natsgo.APIError
	if errors.As(err, &oldErr) {
		return oldErr.Code == 503 || oldErr.Code == 408
	}
	return errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, errConnLost) ||
		errors.Is(err, errStalled) ||
		errors.Is(err, natsgo.ErrTimeout) ||
		errors.Is(err, natsgo.ErrNoResponders) ||
		errors.Is(err, jetstream.ErrNoStreamResponse) ||
		errors.Is(err, natsgo.ErrConnectionReconnecting) ||
		errors.Is(err, natsgo.ErrDisconnected)
}

// retryKV is a KeyValue whose Get, Put, Create, Update and Delete retry
// as retry does, each attempt bounded by attemptTimeout.
type retryKV struct {
	jetstream.KeyValue
	s *Store
}

func (kv retryKV) Get(ctx context.Context, key string) (e jetstream.KeyValueEntry, err error) {
	err = kv.s.retry(ctx, "get "+key, attemptTimeout, func(ctx context.Context, _ int) error {
		e, err = kv.KeyValue.Get(ctx, key)
		return err
	})
	return e, err
}

// Put is last-writer-wins, so an attempt whose acknowledgement was lost
// is simply written again.
func (kv retryKV) Put(ctx context.Context, key string, value []byte) (rev uint64, err error) {
	err = kv.s.retry(ctx, "put "+key, attemptTimeout, func(ctx context.Context, _ int) error {
		rev, err = kv.KeyValue.Put(ctx, key, value)
		return err
	})
	return rev, err
}

func (kv retryKV) Create(ctx context.Context, key string, value []byte, opts ...jetstream.KVCreateOpt) (rev uint64, err error) {
	err = kv.s.retry(ctx, "create "+key, attemptTimeout, func(ctx context.Context, attempt int) error {
		rev, err = kv.KeyValue.Create(ctx, key, value, opts...)
		if attempt > 1 && isConflict(err) {
			r, ok, lerr := kv.landed(ctx, key, value, 0)
			switch {
			case ok:
				rev, err = r, nil
			case lerr != nil && transient(lerr):
				return lerr // the leader could not say whether it landed: ask again, never report a conflict
			}
		}
		return err
	})
	return rev, err
}

func (kv retryKV) Update(ctx context.Context, key string, value []byte, last uint64) (rev uint64, err error) {
	err = kv.s.retry(ctx, "update "+key, attemptTimeout, func(ctx context.Context, attempt int) error {
		rev, err = kv.KeyValue.Update(ctx, key, value, last)
		if attempt > 1 && (isConflict(err) || isWrongSequence(err)) {
			r, ok, lerr := kv.landed(ctx, key, value, last)
			switch {
			case ok:
				rev, err = r, nil
			case lerr != nil && transient(lerr):
				return lerr // the leader could not say whether it landed: ask again, never report a conflict
			}
		}
		return err
	})
	return rev, err
}

func (kv retryKV) Delete(ctx context.Context, key string, opts ...jetstream.KVDeleteOpt) error {
	return kv.s.retry(ctx, "delete "+key, attemptTimeout, func(ctx context.Context, attempt int) error {
		err := kv.KeyValue.Delete(ctx, key, opts...)
		if attempt > 1 && (isConflict(err) || isWrongSequence(err)) {
			if _, gerr := kv.KeyValue.Get(ctx, key); errors.Is(gerr, jetstream.ErrKeyNotFound) {
				return nil // the earlier attempt deleted it
			}
		}
		return err
	})
}

// landed reports whether key holds exactly value at a revision after last:
// an earlier attempt of this write, whose reply was lost, stored it. It
// asks the stream's leader, not any replica (as a KV Get may): a follower
// still applying the write would deny it, and the caller would report a
// conflict for a write that landed (a claim that nobody works on).
// An error is returned when the leader could not be asked: the write may
// have landed or not.
func (kv retryKV) landed(ctx context.Context, key string, value []byte, last uint64) (uint64, bool, error) {
	return kv.s.landed(ctx, kv.KeyValue, key, value, last)
}

// landed is retryKV.landed for any bucket of s.
func (s *Store) landed(ctx context.Context, kv jetstream.KeyValue, key string, value []byte, last uint64) (uint64, bool, error) {
	rev, data, err := s.leaderLast(ctx, "KV_"+kv.Bucket(), "$KV."+kv.Bucket()+"."+key)
	if err != nil {
		if transient(err) {
			return 0, false, err
		}
		return 0, false, nil // the leader's answer: not there (no such message)
	}
	if rev <= last || !bytes.Equal(data, value) {
		return 0, false, nil
	}
	return rev, true, nil
}

// leaderLast returns the sequence and data of the last message on subject
// in stream, read by the stream's leader (a non-direct get).
func (s *Store) leaderLast(ctx context.Context, stream, subject string) (uint64, []byte, error) {
	seq, data, _, err := s.leaderMsg(ctx, stream, subject)
	return seq, data, err
}

// leaderMsg is leaderLast with the message's headers.
func (s *Store) leaderMsg(ctx context.Context, stream, subject string) (uint64, []byte, []byte, error) {
	m, err := s.leaderGetMsg(ctx, stream, msgGetReq{LastFor: subject})
	if err != nil {
		return 0, nil, nil, fmt.Errorf("get last message of %s: %w", subject, err)
	}
	return m.Seq, m.Data, m.Hdrs, nil
}

// msgGetReq is a stream message get: the last message on LastFor, or the
// first from Seq on NextFor.
type msgGetReq struct {
	Seq     uint64 `json:"seq,omitempty"`
	LastFor string `json:"last_by_subj,omitempty"`
	NextFor string `json:"next_by_subj,omitempty"`
}

// storedMsg is a message of a stream, as a message get answers it.
type storedMsg struct {
	Seq     uint64 `json:"seq"`
	Subject string `json:"subject"`
	Data    []byte `json:"data"`
	Hdrs    []byte `json:"hdrs"`
}

// leaderGetMsg asks the stream's leader (a non-direct get, which only the
// leader answers) for the message req names.
func (s *Store) leaderGetMsg(ctx context.Context, stream string, req msgGetReq) (storedMsg, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return storedMsg{}, err
	}
	msg, err := s.nc.RequestWithContext(ctx, "$JS.API.STREAM.MSG.GET."+stream, b)
	if err != nil {
		return storedMsg{}, err
	}
	return decodeMsgGet(msg.Data)
}

// decodeMsgGet decodes the server's answer to a stream message get: the
// message, or the API error it carries.
func decodeMsgGet(b []byte) (storedMsg, error) {
	var resp struct {
		Error   *jetstream.APIError `json:"error"`
		Message *storedMsg          `json:"message"`
	}
	if err := json.Unmarshal(b, &resp); err != nil {
		return storedMsg{}, err
	}
	if resp.Error != nil {
		return storedMsg{}, resp.Error
	}
	if resp.Message == nil || resp.Message.Seq == 0 {
		return storedMsg{}, errors.New("answer without a message")
	}
	return *resp.Message, nil
}
