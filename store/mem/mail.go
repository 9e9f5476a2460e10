package mem

import (
	"context"
	"fmt"
	"slices"

	"github.com/troupe-dev/troupe/internal/kick"
	"github.com/troupe-dev/troupe/mailbox"
)

// Mail is the mailbox.Store view of a Store.
type Mail struct{ s *Store }

type inboxKey struct{ team, agent string }

// Send stores msg, after mailbox.Prepare, in the inbox of to (a member of
// team, or mailbox.Broadcast for every member but msg.From), checking the
// roster of the Store's teams. Each copy of a broadcast gets its own id.
// It returns mailbox.ErrNoTeam for a missing team and a
// *mailbox.UnknownRecipientError for a name not on the roster; then no
// inbox is created or changed.
func (m *Mail) Send(ctx context.Context, teamName, to string, msg mailbox.Message) ([]mailbox.Delivery, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("send to %s in team %s: %w", to, teamName, context.Cause(ctx))
	}
	s := m.s
	msg, err := mailbox.Prepare(msg, s.now())
	if err != nil {
		return nil, fmt.Errorf("send to %s in team %s: %w", to, teamName, err)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, fmt.Errorf("send to %s in team %s: %w", to, teamName, mailbox.ErrClosed)
	}
	c, ok := s.teams[teamName]
	if !ok {
		s.mu.Unlock()
		return nil, fmt.Errorf("send to %s in team %s: %w", to, teamName, mailbox.ErrNoTeam)
	}
	names, err := mailbox.Recipients(teamName, c.Names(), msg.From, to)
	if err != nil {
		s.mu.Unlock()
		return nil, fmt.Errorf("send from %s: %w", msg.From, err)
	}
	out := make([]mailbox.Delivery, 0, len(names))
	var kicks []*watcher
	for i, name := range names {
		cp := msg
		if i > 0 {
			cp.ID = mailbox.NewID()
		}
		cp.Extra = msg.Extra.Clone()
		k := inboxKey{teamName, name}
		s.inboxes[k] = s.pruneLocked(append(s.inboxes[k], cp))
		out = append(out, mailbox.Delivery{To: name, ID: cp.ID})
		kicks = s.appendWatchersLocked(kicks, k)
	}
	s.mu.Unlock()
	for _, w := range kicks {
		w.Kick()
	}
	return out, nil
}

// Read returns agent's messages, oldest first; with unreadOnly, only the
// unread ones. A missing team or inbox reads as empty.
func (m *Mail) Read(ctx context.Context, teamName, agent string, unreadOnly bool) ([]mailbox.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("read inbox of %s in team %s: %w", agent, teamName, context.Cause(ctx))
	}
	s := m.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("read inbox of %s in team %s: %w", agent, teamName, mailbox.ErrClosed)
	}
	var out []mailbox.Message
	for _, msg := range s.inboxes[inboxKey{teamName, agent}] {
		if unreadOnly && msg.Read {
			continue
		}
		msg.Extra = msg.Extra.Clone()
		out = append(out, msg)
	}
	return out, nil
}

// MarkRead marks the messages with the given ids read and returns how many
// changed; absent and already-read ids are ignored. Like every write, it
// prunes read messages beyond the retention bound.
func (m *Mail) MarkRead(ctx context.Context, teamName, agent string, ids []string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("mark read in inbox of %s in team %s: %w", agent, teamName, context.Cause(ctx))
	}
	s := m.s
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return 0, fmt.Errorf("mark read in inbox of %s in team %s: %w", agent, teamName, mailbox.ErrClosed)
	}
	k := inboxKey{teamName, agent}
	box := s.inboxes[k]
	n := 0
	for i := range box {
		if !box[i].Read && slices.Contains(ids, box[i].ID) {
			box[i].Read = true
			n++
		}
	}
	var kicks []*watcher
	if n > 0 {
		s.inboxes[k] = s.pruneLocked(box)
		kicks = s.appendWatchersLocked(nil, k)
	}
	s.mu.Unlock()
	for _, w := range kicks {
		w.Kick()
	}
	return n, nil
}

// Watch returns a channel that receives a coalesced kick after every change
// of agent's inbox. It is closed when ctx is done or the store is closed.
func (m *Mail) Watch(ctx context.Context, teamName, agent string) (<-chan struct{}, error) {
	ch, err := m.s.watch(ctx, inboxKey{teamName, agent})
	if err != nil {
		return nil, fmt.Errorf("watch inbox of %s in team %s: %w", agent, teamName, err)
	}
	return ch, nil
}

// watch registers a watcher of key k: an inbox, or a task list (listKey).
func (s *Store) watch(ctx context.Context, k inboxKey) (<-chan struct{}, error) {
	if err := ctx.Err(); err != nil {
		return nil, context.Cause(ctx)
	}
	w := kick.New()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, mailbox.ErrClosed
	}
	set := s.watchers[k]
	if set == nil {
		set = map[*watcher]struct{}{}
		s.watchers[k] = set
	}
	set[w] = struct{}{}
	s.mu.Unlock()
	// The callback runs on its own short-lived goroutine once ctx is done.
	// Close closes w itself and deregisters the callback.
	stop := context.AfterFunc(ctx, func() {
		s.mu.Lock()
		if set := s.watchers[k]; set != nil {
			delete(set, w)
			if len(set) == 0 {
				delete(s.watchers, k)
			}
		}
		s.mu.Unlock()
		w.Close()
	})
	w.OnClose(stop)
	return w.C(), nil
}

// pruneLocked drops the oldest read messages beyond the retention bound,
// keeping every unread one. s.mu must be held.
func (s *Store) pruneLocked(box []mailbox.Message) []mailbox.Message {
	read := 0
	for _, msg := range box {
		if msg.Read {
			read++
		}
	}
	drop := read - s.keepRead
	if drop <= 0 {
		return box
	}
	out := box[:0:0]
	for _, msg := range box {
		if msg.Read && drop > 0 {
			drop--
			continue
		}
		out = append(out, msg)
	}
	return out
}

// appendWatchersLocked appends the watchers of inbox k to ws. s.mu must be
// held.
func (s *Store) appendWatchersLocked(ws []*watcher, k inboxKey) []*watcher {
	for w := range s.watchers[k] {
		ws = append(ws, w)
	}
	return ws
}

// watcher is one Watch channel.
type watcher = kick.Signal
