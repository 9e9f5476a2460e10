package nats

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/troupe-dev/troupe/peer"
)

// DefaultSessionTTL is how long a session's entry outlives its last
// heartbeat (Publish): a session that died without removing it is gone
// from List after at most this long.
const DefaultSessionTTL = 30 * time.Second

// Sessions is the registry of the sessions that use this store's
// namespace, on any host: KV bucket <ns>_v1_sessions, one entry per
// session, removed by the server DefaultSessionTTL after its last Publish
// (a session publishes again as its heartbeat). Messages between them go
// over core NATS request/reply on <ns>.v1.bridge.<session>, so only
// sessions of one account and namespace reach each other.
type Sessions struct {
	s   *Store
	ttl time.Duration

	mu sync.Mutex
	kv jetstream.KeyValue // guarded by mu; bound on first use
}

var (
	_ peer.Registry = (*Sessions)(nil)
	_ peer.Bridge   = (*Sessions)(nil)
)

// Sessions returns the store's session registry and bridge.
func (s *Store) Sessions() *Sessions { return &Sessions{s: s, ttl: DefaultSessionTTL} }

// SetTTL changes how long an entry outlives its last Publish (tests).
// It takes effect when the bucket is first created.
func (ss *Sessions) SetTTL(d time.Duration) { ss.ttl = d }

// bucket binds or creates the sessions bucket.
func (ss *Sessions) bucket(ctx context.Context) (jetstream.KeyValue, error) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.kv != nil {
		return ss.kv, nil
	}
	name := bucketName(ss.s.opts.Namespace, "sessions")
	kv, err := ss.s.js.KeyValue(ctx, name)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		kv, err = ss.s.js.CreateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket: name, Description: "troupe running sessions", History: 1, TTL: ss.ttl,
			MaxValueSize: 64 << 10, Storage: jetstream.MemoryStorage, Replicas: ss.s.replicas,
			Metadata: map[string]string{schemaKey: schemaVersion},
		})
		if errors.Is(err, jetstream.ErrBucketExists) {
			kv, err = ss.s.js.KeyValue(ctx, name)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("bucket %s: %w", name, err)
	}
	ss.kv = kv
	return kv, nil
}

// Publish writes e's entry and restarts its time to live.
func (ss *Sessions) Publish(ctx context.Context, e peer.Entry) error {
	kv, err := ss.bucket(ctx)
	if err != nil {
		return fmt.Errorf("publish session %s: %w", e.ID, err)
	}
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("publish session %s: %w", e.ID, err)
	}
	if _, err := kv.Put(ctx, token(e.ID), b); err != nil {
		return fmt.Errorf("publish session %s: %w", e.ID, err)
	}
	return nil
}

// Remove deletes id's entry.
func (ss *Sessions) Remove(ctx context.Context, id string) error {
	kv, err := ss.bucket(ctx)
	if err != nil {
		return fmt.Errorf("remove session %s: %w", id, err)
	}
	if err := kv.Purge(ctx, token(id)); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return fmt.Errorf("remove session %s: %w", id, err)
	}
	return nil
}

// List returns the entries alive now, oldest first.
func (ss *Sessions) List(ctx context.Context) ([]peer.Entry, error) {
	kv, err := ss.bucket(ctx)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	keys, err := kv.ListKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	var out []peer.Entry
	for k := range keys.Keys() {
		v, err := kv.Get(ctx, k)
		if err != nil {
			continue // gone meanwhile
		}
		var e peer.Entry
		if json.Unmarshal(v.Value(), &e) == nil && e.ID != "" {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b peer.Entry) int {
		if c := a.Started.Compare(b.Started); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

func (ss *Sessions) bridgeSubject(id string) string {
	return ss.s.opts.Namespace + ".v" + schemaVersion + ".bridge." + token(id)
}

// SendBridge delivers m to session id and waits for its answer.
func (ss *Sessions) SendBridge(ctx context.Context, id string, m peer.Message) error {
	if err := m.Validate(); err != nil {
		return fmt.Errorf("%w: %v", peer.ErrRefused, err)
	}
	b, err := json.Marshal(peer.Frame{Type: peer.FrameMessage, Message: &m})
	if err != nil {
		return fmt.Errorf("bridge to %s: %w", id, err)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, peer.DefaultIOTimeout)
		defer cancel()
	}
	reply, err := ss.s.nc.RequestWithContext(ctx, ss.bridgeSubject(id), b)
	if errors.Is(err, natsgo.ErrNoResponders) {
		return fmt.Errorf("bridge to %s: %w", id, peer.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("bridge to %s: %w", id, err)
	}
	f, err := peer.DecodeFrame(reply.Data)
	if err != nil {
		return fmt.Errorf("bridge to %s: reply: %w", id, err)
	}
	if f.Type != peer.FrameReply {
		return fmt.Errorf("bridge to %s: reply of type %q", id, f.Type)
	}
	if !f.OK {
		return fmt.Errorf("%w: %s", peer.ErrRefused, f.Error)
	}
	return nil
}

// ServeBridge answers the messages for session id with deliver until stop.
// A frame that is not a valid message is answered with an error and
// logged.
func (ss *Sessions) ServeBridge(id string, deliver func(peer.Message) error) (stop func(), err error) {
	answer := func(msg *natsgo.Msg, err error) {
		f := peer.Frame{Type: peer.FrameReply, OK: err == nil}
		if err != nil {
			f.Error = err.Error()
		}
		if b, e := json.Marshal(f); e == nil {
			_ = msg.Respond(b)
		}
	}
	sub, err := ss.s.nc.Subscribe(ss.bridgeSubject(id), func(msg *natsgo.Msg) {
		f, err := peer.DecodeFrame(msg.Data)
		if err == nil && f.Type != peer.FrameMessage {
			err = &peer.FrameError{Reason: "expected a message frame, got " + f.Type}
		}
		if err == nil && f.Message.To != "" && f.Message.To != id {
			err = &peer.FrameError{Reason: "message for another session"}
		}
		if err != nil {
			ss.s.log.Warn("bridge: frame refused", "session", id, "reason", err)
			answer(msg, err)
			return
		}
		if err := deliver(*f.Message); err != nil {
			ss.s.log.Info("bridge: message refused", "session", id, "from", f.Message.Sender(), "reason", err)
			answer(msg, err)
			return
		}
		answer(msg, nil)
	})
	if err != nil {
		return nil, fmt.Errorf("serve bridge %s: %w", id, err)
	}
	if err := ss.s.nc.Flush(); err != nil {
		sub.Unsubscribe()
		return nil, fmt.Errorf("serve bridge %s: %w", id, err)
	}
	return func() {
		// Flushed, so that the server has dropped the subscription when
		// stop returns: a sender then finds no responder at once instead
		// of waiting out its timeout for a reply nobody sends.
		if sub.Unsubscribe() == nil {
			_ = ss.s.nc.FlushTimeout(peer.DefaultIOTimeout)
		}
	}, nil
}
