package nats

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/team"
)

// attemptTimeout bounds one publish attempt of Send before it is retried
// (with the same Nats-Msg-Id, so a late first copy is not stored twice).
const attemptTimeout = 3 * time.Second

// Send stores msg, after mailbox.Prepare, in the inbox of to (a member of
// team, or mailbox.Broadcast for every member but msg.From); each copy of a
// broadcast gets its own id. It returns once the server acknowledged every
// copy, retrying unacknowledged publishes until ctx or SendTimeout ends.
// Errors: mailbox.ErrNoTeam, *mailbox.UnknownRecipientError, or a
// wrapped NATS error; the deliveries made before a failure are returned.
// A message whose id is already in the inbox (sent again within the
// server's two-minute duplicate window) is stored once and reported
// delivered.
func (m *Mail) Send(ctx context.Context, teamName, to string, msg mailbox.Message) ([]mailbox.Delivery, error) {
	s := m.s
	msg, err := mailbox.Prepare(msg, s.now())
	if err != nil {
		return nil, fmt.Errorf("send to %s in team %s: %w", to, teamName, err)
	}
	if s.isClosed() {
		return nil, fmt.Errorf("send to %s in team %s: %w", to, teamName, mailbox.ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("send to %s in team %s: %w", to, teamName, context.Cause(ctx))
	}
	ctx, cancel := s.budget(ctx, s.opts.SendTimeout) // outage.go: an outage does not count
	defer cancel()
	defer context.AfterFunc(s.ctx, cancel)()
	var roster []string
	err = s.retry(ctx, "send: look up team "+teamName, attemptTimeout, func(ctx context.Context, _ int) error {
		var err error
		roster, err = s.Teams().names(ctx, teamName)
		return err
	})
	if errors.Is(err, team.ErrNotFound) {
		return nil, fmt.Errorf("send to %s in team %s: %w", to, teamName, mailbox.ErrNoTeam)
	}
	if err != nil {
		return nil, fmt.Errorf("send to %s in team %s: %w", to, teamName, s.closedAs(err, mailbox.ErrClosed))
	}
	names, err := mailbox.Recipients(teamName, roster, msg.From, to)
	if err != nil {
		return nil, fmt.Errorf("send from %s: %w", msg.From, err)
	}
	out := make([]mailbox.Delivery, 0, len(names))
	for i, name := range names {
		cp := msg
		if i > 0 {
			cp.ID = mailbox.NewID()
		}
		data, err := json.Marshal(cp)
		if err != nil {
			return out, fmt.Errorf("send to %s in team %s: %w", name, teamName, err)
		}
		if _, err := s.publish(ctx, s.msgSubject(teamName, name, cp.ID), dedupID(teamName, name, cp.ID), data); err != nil {
			return out, fmt.Errorf("send to %s in team %s: %w", name, teamName, s.closedAs(err, mailbox.ErrClosed))
		}
		out = append(out, mailbox.Delivery{To: name, ID: cp.ID})
	}
	return out, nil
}

// dedupID is the Nats-Msg-Id of a message: unique per inbox and id.
func dedupID(teamName, agent, id string) string {
	return token(teamName) + "." + token(agent) + "." + token(id)
}

// publish stores data on subject in the mail stream, retrying attempts
// that got no acknowledgement (a restarting server, a lost connection)
// until ctx ends. The Nats-Msg-Id header makes retries safe: the server
// stores a message once however many copies reach it.
func (s *Store) publish(ctx context.Context, subject, msgID string, data []byte) (*jetstream.PubAck, error) {
	if limit := s.nc.MaxPayload(); int64(len(data))+int64(len(subject))+256 > limit {
		return nil, fmt.Errorf("message of %d bytes is larger than the NATS server at %s accepts (max_payload %d)", len(data), s.url, limit)
	}
	m := natsgo.NewMsg(subject)
	m.Header.Set(jetstream.MsgIDHeader, msgID)
	m.Data = data
	var ack *jetstream.PubAck
	err := s.retry(ctx, "send "+subject, attemptTimeout, func(ctx context.Context, _ int) error {
		var err error
		ack, err = s.js.PublishMsg(ctx, m, jetstream.WithExpectStream(s.mailStream))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("publish: %w", err)
	}
	return ack, nil
}

// Read returns agent's messages, oldest first; with unreadOnly, only the
// unread ones. A missing team or inbox reads as empty. An entry that does
// not decode is moved aside (to the inbox's subject plus ".corrupt.<seq>")
// and reported as a *mailbox.CorruptError, returned with the good
// messages; a read with unreadOnly does not decode the entries marked
// read, so it finds only the unread ones that are bad.
func (m *Mail) Read(ctx context.Context, teamName, agent string, unreadOnly bool) ([]mailbox.Message, error) {
	s := m.s
	ctx, cancel, err := s.begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("read inbox of %s in team %s: %w", agent, teamName, s.closedAs(err, mailbox.ErrClosed))
	}
	defer cancel()
	inbox := s.inboxSubject(teamName, agent)
	raw, marks, marksRev, floor, gen, err := s.scanWithMarks(ctx, teamName, agent, inbox, unreadOnly)
	if err != nil {
		return nil, fmt.Errorf("read inbox of %s in team %s: %w", agent, teamName, s.closedAs(err, mailbox.ErrClosed))
	}
	read := make(map[uint64]bool, len(marks))
	for _, mk := range marks {
		read[mk.Seq] = true
	}
	for _, r := range raw {
		if !read[r.seq] {
			break
		}
		floor = r.seq
	}
	if raw, err = s.dropPruned(ctx, raw, read, marks, marksRev); err != nil {
		return nil, fmt.Errorf("read inbox of %s in team %s: %w", agent, teamName, s.closedAs(err, mailbox.ErrClosed))
	}
	var out []mailbox.Message
	var returned []idSeq
	var bad []error
	for _, r := range raw {
		if unreadOnly && read[r.seq] {
			// Not decoded: an inbox keeps up to KeepRead read messages,
			// and decoding them all on every read of a few new ones was
			// half of a woken reader's CPU.
			continue
		}
		msg, err := decodeEntry(r.data)
		if err != nil {
			bad = append(bad, fmt.Errorf("stream sequence %d: %w", r.seq, err))
			s.moveAside(ctx, r)
			continue
		}
		msg.Read = read[r.seq]
		out = append(out, msg)
		returned = append(returned, idSeq{id: msg.ID, seq: r.seq})
	}
	if !unreadOnly {
		returned = nil // a reader marks what it read unread; a full read keeps nothing
	}
	s.floors.record(inbox, floor, returned, gen)
	if len(bad) > 0 {
		return out, &mailbox.CorruptError{Team: teamName, Agent: agent, MovedTo: s.inboxSubject(teamName, agent) + ".*.corrupt", Err: errors.Join(bad...)}
	}
	return out, nil
}

// scanWithMarks scans an inbox from past its read floor (from the start
// for a full read) and fetches its read marks meanwhile: the two are
// independent requests, and a woken teammate waits for both (traced on one
// server, the marks' get alone took up to 9 ms of a 12 ms delivery when it
// came after the scan). It returns the floor the scan began above and the
// floors' generation to record what the read finds with. A scan across a
// disconnection, which forgets the floors because the server may come
// back with its sequences started again, is done again from the start.
func (s *Store) scanWithMarks(ctx context.Context, teamName, agent, inbox string, unreadOnly bool) (raw []rawMsg, marks []readMark, marksRev, floor, gen uint64, err error) {
	for attempt := 0; ; attempt++ {
		readMarks := async(func() (markState, error) {
			marks, rev, err := s.readMarks(ctx, teamName, agent)
			return markState{marks, rev}, err
		})
		floor, gen = s.floors.get(inbox)
		if !unreadOnly {
			floor = 0
		}
		if s.readHook != nil {
			s.readHook("floor")
		}
		raw, err = s.scanInbox(ctx, teamName, agent, floor+1)
		if s.readHook != nil {
			s.readHook("scanned")
		}
		ms, merr := readMarks()
		if err == nil {
			err = merr
		}
		if err != nil || s.floors.generation() == gen || attempt == 2 {
			return raw, ms.marks, ms.rev, floor, gen, err
		}
	}
}

// markState is an inbox's read marks and their KV revision.
type markState struct {
	marks []readMark
	rev   uint64
}

// dropPruned leaves out of raw the messages that are not marked read only
// because a MarkRead pruned them (deleted the message and dropped its
// mark) between the scan, which saw them, and the marks' fetch. A prune
// deletes the oldest read messages and keeps the marks of the newer ones,
// so such a message is older than every mark left, or any message when no
// mark is left of an inbox that had some; each of those is looked up, and
// one that is gone is left out. Nothing is looked up when every unread
// message is newer than the oldest mark, as after an ordinary read.
func (s *Store) dropPruned(ctx context.Context, raw []rawMsg, read map[uint64]bool, marks []readMark, marksRev uint64) ([]rawMsg, error) {
	if marksRev == 0 {
		return raw, nil // never marked: nothing was pruned
	}
	var below uint64 = math.MaxUint64 // with no marks left, every message is suspect
	if len(marks) > 0 {
		below = marks[0].Seq
	}
	var gone map[uint64]bool
	for _, r := range raw {
		if read[r.seq] || r.seq >= below {
			continue
		}
		_, err := s.mail.GetMsg(ctx, r.seq)
		switch {
		case err == nil:
		case errors.Is(err, jetstream.ErrMsgNotFound):
			if gone == nil {
				gone = map[uint64]bool{}
			}
			gone[r.seq] = true
		default:
			return nil, fmt.Errorf("look up stream sequence %d: %w", r.seq, err)
		}
	}
	if gone == nil {
		return raw, nil
	}
	return slices.DeleteFunc(raw, func(r rawMsg) bool { return gone[r.seq] }), nil
}

// alreadyGone reports whether a DeleteMsg failed because the message is
// not there: deleted before (by another store's prune), or a sequence
// past the stream's end (a mark from a server whose data was wiped).
// nats.go folds the server's answer into the text of
// ErrMsgDeleteUnsuccessful, so its description is what tells.
func alreadyGone(err error) bool {
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return true
	}
	if !errors.Is(err, jetstream.ErrMsgDeleteUnsuccessful) {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "no message found") || strings.Contains(msg, "stream store EOF") ||
		(strings.Contains(msg, "sequence") && strings.Contains(msg, "not found"))
}

// decodeEntry decodes one stored message.
func decodeEntry(data []byte) (mailbox.Message, error) {
	var msg mailbox.Message
	if err := json.Unmarshal(data, &msg); err != nil {
		return mailbox.Message{}, err
	}
	if msg.ID == "" {
		return mailbox.Message{}, errors.New("message: msg_id: missing")
	}
	return msg, nil
}

// moveAside copies an undecodable entry to a subject no inbox reads and
// deletes the original; on failure it leaves the entry and logs why.
func (s *Store) moveAside(ctx context.Context, r rawMsg) {
	m := natsgo.NewMsg(fmt.Sprintf("%s.corrupt.%d", r.subject, r.seq))
	m.Header.Set(jetstream.MsgIDHeader, fmt.Sprintf("corrupt.%d", r.seq))
	m.Data = r.data
	if _, err := s.js.PublishMsg(ctx, m, jetstream.WithExpectStream(s.mailStream)); err != nil {
		s.log.Warn("nats store: keep a corrupt inbox entry aside", "seq", r.seq, "err", err)
		return
	}
	if err := s.mail.DeleteMsg(ctx, r.seq); err != nil && !alreadyGone(err) {
		s.log.Warn("nats store: delete a corrupt inbox entry", "seq", r.seq, "err", err)
	}
}

// rawMsg is one stored inbox entry.
type rawMsg struct {
	seq     uint64
	subject string
	data    []byte
}

// scanBatch is the largest fetch of one inbox scan.
const scanBatch = 1000

// scanInbox returns every entry of an inbox from stream sequence from on,
// in stream order, by batched direct gets (inboxget.go), or through an
// ephemeral consumer, deleted afterwards, from a server that does not
// answer those. A scan that stops before the end starts over.
func (s *Store) scanInbox(ctx context.Context, teamName, agent string, from uint64) (out []rawMsg, err error) {
	err = s.retry(ctx, "read inbox of "+agent+" in team "+teamName, 0, func(ctx context.Context, _ int) error {
		inbox := s.inboxSubject(teamName, agent)
		seen := s.seen.floor(inbox, time.Now())
		// On a cluster the leader is asked for the inbox's newest message
		// while a replica answers the scan: what the leader had before the
		// scan began is in the answer or taken from the leader below, and
		// so is what came meanwhile and the leader already had.
		newest := s.goLeaderNewest(ctx, s.mailStream, inbox+".*")
		out, err = s.scanInboxDirect(ctx, teamName, agent, from)
		if errors.Is(err, errNoDirect) {
			out, err = s.scanInboxOnce(ctx, teamName, agent, from)
		}
		last, lerr := newest()
		if err == nil {
			err = lerr
		}
		last = max(last, seen)
		if err == nil && last >= max(from, 1) && (len(out) == 0 || out[len(out)-1].seq < last) {
			out, err = s.inboxFromLeader(ctx, teamName, agent, out, from, last, seen)
		}
		return err
	})
	return out, err
}

// leaderCatchUp bounds the messages one inbox read takes from the stream's
// leader (inboxFromLeader).
const leaderCatchUp = 32

// leaderLagWait bounds how long an inbox read waits for the stream's
// leader to apply a message a watch delivered (inboxFromLeader).
const leaderLagWait = 50 * time.Millisecond

// isMsgNotFound reports whether err is the server's "no message found".
func isMsgNotFound(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeMessageNotFound
}

// inboxFromLeader completes out, an inbox read from a replica that had
// not yet stored the inbox's messages up to last (the leader's newest),
// with the missing ones read from the leader, one message get each. On a
// cluster the replica a client reads from trails the leader by a few
// milliseconds under load, so a teammate woken by a message often read
// its inbox without it; the read then waited a retry's backoff (100 ms)
// for the replica, most of the delivery time on a three-node cluster.
// More than leaderCatchUp missing messages: the replica is far behind,
// and the read is retried (errStalled).
//
// seen is the newest message a watch of this store delivered for the inbox
// (delivered.go): one the leader does not have yet is waited for (a retry),
// not taken for deleted.
func (s *Store) inboxFromLeader(ctx context.Context, teamName, agent string, out []rawMsg, from, last, seen uint64) ([]rawMsg, error) {
	filter := s.inboxSubject(teamName, agent) + ".*"
	from = max(from, 1)
	if len(out) > 0 {
		from = out[len(out)-1].seq + 1
	}
	// ask returns the leader's first message of the inbox from sequence
	// from. While the leader is still applying a message the watch
	// delivered, which takes milliseconds, it is asked again after 1, 2,
	// 4 ... ms, up to leaderLagWait in all, before the read is retried
	// after a retry's backoff (100 ms and up): traced on a three-node
	// cluster, such retries made the slowest deliveries (40-110 ms).
	ask := func(from uint64) (storedMsg, error) {
		var waited time.Duration
		for wait := time.Millisecond; ; wait *= 2 {
			actx, cancel := context.WithTimeout(ctx, attemptTimeout)
			m, err := s.leaderGetMsg(actx, s.mailStream, msgGetReq{Seq: from, NextFor: filter})
			cancel()
			if !isMsgNotFound(err) || from > seen || waited >= leaderLagWait {
				return m, err
			}
			if sleepCtx(ctx, wait); ctx.Err() != nil {
				return storedMsg{}, context.Cause(ctx)
			}
			waited += wait
		}
	}
	for range leaderCatchUp {
		m, err := ask(from)
		if isMsgNotFound(err) {
			if from <= seen {
				return nil, fmt.Errorf("inbox read: message %d, delivered by a watch, not yet at the stream leader: %w", seen, errStalled)
			}
			return out, nil // deleted since the leader counted it
		}
		if err != nil {
			return nil, fmt.Errorf("inbox read from the stream leader: %w", err)
		}
		if m.Seq < from || m.Subject == "" {
			return nil, fmt.Errorf("inbox read from the stream leader: message %d on %q after asking from %d", m.Seq, m.Subject, from)
		}
		out = append(out, rawMsg{seq: m.Seq, subject: m.Subject, data: m.Data})
		if m.Seq >= last {
			return out, nil
		}
		from = m.Seq + 1
	}
	return nil, fmt.Errorf("inbox scan behind the stream leader (message %d) by more than %d messages: %w", last, leaderCatchUp, errStalled)
}

// leaderNewest returns the sequence of the newest message on subject (a
// wildcard may match several) as stream's leader has it, 0 when there is
// none: what a read from a replica must include. On a cluster a direct get
// or a consumer may be answered by a replica still applying the newest
// messages. The leader, which may be gone, is asked within one attempt's
// timeout, so that a lost leader is asked again, not waited for. A server
// that is not part of a cluster holds the only copy: nothing to check, and
// no request of the JetStream API (which the stream's leader queues behind
// every other) per read.
func (s *Store) leaderNewest(ctx context.Context, stream, subject string) (uint64, error) {
	if s.nc.ConnectedClusterName() == "" {
		return 0, nil
	}
	ctx, cancel := context.WithTimeout(ctx, attemptTimeout)
	defer cancel()
	last, _, err := s.leaderLast(ctx, stream, subject)
	if isMsgNotFound(err) {
		return 0, nil // nothing there yet
	}
	return last, err
}

// goLeaderNewest starts leaderNewest and returns its wait; without a
// cluster there is nothing to ask and no goroutine.
func (s *Store) goLeaderNewest(ctx context.Context, stream, subject string) func() (uint64, error) {
	if s.nc.ConnectedClusterName() == "" {
		return func() (uint64, error) { return 0, nil }
	}
	return async(func() (uint64, error) { return s.leaderNewest(ctx, stream, subject) })
}

// async runs f in a goroutine and returns the wait for its result, for
// two requests to be in flight at once. The wait must be called.
func async[T any](f func() (T, error)) func() (T, error) {
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := f()
		ch <- result{v, err}
	}()
	return func() (T, error) {
		r := <-ch
		return r.v, r.err
	}
}

func (s *Store) scanInboxOnce(ctx context.Context, teamName, agent string, from uint64) ([]rawMsg, error) {
	policy, start := jetstream.DeliverAllPolicy, uint64(0)
	if from > 1 {
		policy, start = jetstream.DeliverByStartSequencePolicy, from
	}
	cons, err := s.js.CreateConsumer(ctx, s.mailStream, jetstream.ConsumerConfig{
		FilterSubject:     s.inboxSubject(teamName, agent) + ".*",
		DeliverPolicy:     policy,
		OptStartSeq:       start,
		AckPolicy:         jetstream.AckNonePolicy,
		MemoryStorage:     true,
		Replicas:          1,
		InactiveThreshold: time.Minute,
	})
	if err != nil {
		return nil, fmt.Errorf("inbox consumer: %w", err)
	}
	info := cons.CachedInfo()
	defer s.goFunc(func(ctx context.Context) {
		ctx, cancel := context.WithTimeout(ctx, s.opts.RequestTimeout) // Close cuts it short; the server drops the consumer after its inactive threshold
		defer cancel()
		if err := s.js.DeleteConsumer(ctx, s.mailStream, info.Name); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
			s.log.Debug("nats store: delete inbox consumer", "consumer", info.Name, "err", err)
		}
	})
	pending := int(info.NumPending)
	out := make([]rawMsg, 0, pending)
	for len(out) < pending {
		batch, err := cons.Fetch(min(pending-len(out), scanBatch), jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			return nil, fmt.Errorf("inbox fetch: %w", err)
		}
		n := 0
		for msg := range batch.Messages() {
			md, err := msg.Metadata()
			if err != nil {
				return nil, fmt.Errorf("inbox fetch: %w", err)
			}
			out = append(out, rawMsg{seq: md.Sequence.Stream, subject: msg.Subject(), data: msg.Data()})
			n++
		}
		if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) && !errors.Is(err, natsgo.ErrTimeout) {
			return nil, fmt.Errorf("inbox fetch: %w", err)
		}
		if n == 0 {
			// Entries deleted since the consumer counted them, or a
			// consumer whose server is gone.
			ci, err := cons.Info(ctx)
			if err != nil {
				return nil, fmt.Errorf("inbox fetch: %w: %w", errStalled, err)
			}
			if ci.NumPending > 0 {
				return nil, fmt.Errorf("inbox fetch: %w with %d messages pending", errStalled, ci.NumPending)
			}
			break
		}
	}
	return out, nil
}
