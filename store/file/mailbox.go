package file

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/troupe-dev/troupe/internal/lockfile"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/team"
)

var _ mailbox.Store = (*Mail)(nil)

// How a send reaches an inbox (group commit).
//
// A sender first drops its entry into its own folder of the recipient's
// spool, inboxes/.spool/<agent>/<sender>/, as <time>-<id>.msg, then
// competes for the inbox lock. Whoever holds the lock merges every spooled
// entry of every sender into the inbox in one atomic rewrite: it renames each
// .msg to .claimed, appends them, commits the inbox (fsync, rename), then
// removes the .claimed files. A sender returns success only when its entry
// is gone from its folder after being claimed, so "sent" always means "in
// the inbox on disk". Under contention one rewrite carries many messages,
// which is why throughput grows with the number of writers instead of
// collapsing as it does for one-message-per-lock writers.
//
// Each sender watches only its own folder, so a send wakes its own sender
// and not every process waiting on the same inbox; waiting for the lock
// itself is woken by the lock directory's removal.
//
// A sender that gives up while its entry is still .msg withdraws it
// (removing the file succeeds only if nobody claimed it) and reports an
// error; nothing lands later. A holder whose merge fails before the inbox
// is replaced (a full disk, a lost lock) renames the entries it claimed back
// to .msg, so that each sender withdraws its own: an error from Send means
// "not delivered". A .claimed entry left by a holder that died is merged by
// the next holder, skipping ids already in the inbox; a sender whose entry
// such a holder took and did not commit within withdrawGrace gets an error
// matching mailbox.ErrOutcomeUnknown, the one case where it cannot tell.
const (
	spoolDirName = ".spool"
	sufMsg       = ".msg"
	sufClaimed   = ".claimed"
	validHint    = "valid-identity"
)

// withdrawGrace is how long a sender that gave up waits for a holder that
// claimed its entry to commit it.
const withdrawGrace = 2 * time.Second

// senderTTL is how long an empty sender folder of the spool stays before a
// lock holder removes it (its process is gone or idle).
const senderTTL = time.Minute

// Send implements mailbox.Store.
func (m *Mail) Send(ctx context.Context, teamName, to string, msg mailbox.Message) ([]mailbox.Delivery, error) {
	s := m.s
	if s.isClosed() {
		return nil, mailbox.ErrClosed
	}
	tf, err := m.team(ctx, teamName)
	if err != nil {
		return nil, fmt.Errorf("send to %s: %w", to, err)
	}
	msg, err = mailbox.Prepare(msg, s.now())
	if err != nil {
		return nil, fmt.Errorf("send to %s: %w", to, err)
	}
	rcpts, err := mailbox.Recipients(tf.cfg.Name, tf.names, msg.From, to)
	if err != nil {
		return nil, fmt.Errorf("send: %w", err)
	}
	var out []mailbox.Delivery
	for i, r := range rcpts {
		copy := msg
		if i > 0 {
			copy.ID = mailbox.NewID()
		}
		if err := m.deliver(ctx, tf.cfg.Name, r, copy); err != nil {
			return out, fmt.Errorf("send to %s in team %s: %w", r, tf.cfg.Name, err)
		}
		out = append(out, mailbox.Delivery{To: r, ID: copy.ID})
	}
	return out, nil
}

// team returns the team file (shared: not to be modified), mapping a
// missing team to mailbox.ErrNoTeam. It reads the file only when it changed
// since this store last saw it (teamcache.go), so the roster check of every
// mailbox operation costs one stat in a settled team of any size.
func (m *Mail) team(ctx context.Context, name string) (*teamSnap, error) {
	if err := checkTeamName(name); err != nil {
		return nil, err
	}
	ts := m.s.Teams()
	if err := ts.begin("get", name); err != nil {
		return nil, err
	}
	snap, err := ts.snapshot(ctx, name, ts.configPath(name), false)
	if errors.Is(err, team.ErrNotFound) {
		return nil, fmt.Errorf("team %s: %w", name, mailbox.ErrNoTeam)
	}
	return snap, err
}

// deliver puts one message into one inbox and returns once it is there.
func (m *Mail) deliver(ctx context.Context, teamName, agent string, msg mailbox.Message) error {
	s := m.s
	inbox := s.inboxPath(teamName, agent)
	spool := m.spoolDir(teamName, agent)
	mine := filepath.Join(spool, s.sender)
	if err := s.checkNoLinks(mine); err != nil {
		return fmt.Errorf("not sent: %w", err)
	}
	if err := ensureInbox(inbox); err != nil {
		return err
	}
	entry, err := json.Marshal(msg)
	if err != nil {
		return fmt.Errorf("encode message: %w", err)
	}
	if done, err := m.direct(teamName, agent, inbox, spool, entry); done || err != nil {
		return err
	}
	base := filepath.Join(mine, fmt.Sprintf("%020d-%s", s.now().UnixNano(), msg.ID))
	if err := writeSpool(mine, base+sufMsg, entry); err != nil {
		return err
	}

	s.pin(filepath.Dir(inbox))
	s.pin(mine)
	lockKick, cancelLock, err := s.watch.Subscribe(filepath.Dir(inbox), func(n string) bool { return n == filepath.Base(inbox)+".lock" })
	if err != nil {
		return m.withdraw(base, err, nil)
	}
	defer cancelLock()
	name := filepath.Base(base)
	spoolKick, cancelSpool, err := s.watch.Subscribe(mine, func(n string) bool { return strings.HasPrefix(n, name) })
	if err != nil {
		return m.withdraw(base, err, nil)
	}
	defer cancelSpool()

	ctx, cancel := context.WithTimeoutCause(ctx, s.opts.LockTimeout,
		fmt.Errorf("inbox lock %s not taken within %v", filepath.Base(inbox)+".lock", s.opts.LockTimeout))
	defer cancel()
	backoff := time.Duration(0)
	for {
		if done, err := receipt(base); err != nil || done {
			return err
		}
		lk, err := lockfile.TryAcquire(inbox+".lock", s.lockOptions())
		switch {
		case err == nil:
			err = m.mergeLocked(lk, teamName, agent, inbox, spool, nil)
			if rerr := lk.Release(); err == nil && rerr != nil && !errors.Is(rerr, lockfile.ErrCompromised) {
				err = rerr
			}
			if err != nil && !errors.Is(err, lockfile.ErrCompromised) {
				return m.withdraw(base, err, spoolKick)
			}
			backoff = 0
			continue
		case !errors.Is(err, lockfile.ErrLocked):
			return m.withdraw(base, err, spoolKick)
		}
		backoff = min(max(2*backoff, lockfile.DefaultMinBackoff), lockfile.DefaultMaxBackoff)
		t := time.NewTimer(backoff)
		select {
		case <-lockKick:
		case <-spoolKick:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return m.withdraw(base, context.Cause(ctx), spoolKick)
		}
		t.Stop()
	}
}

// direct delivers entry when nobody holds the inbox's lock: it goes into
// the inbox with whatever others have spooled, without a spool entry of
// its own (no spool file to write, claim and remove, no watches), the way
// a single writer that meets no contention should pay least. done is
// false when the lock is taken, or was lost before the commit (nothing of
// entry landed): the caller then spools it.
func (m *Mail) direct(teamName, agent, inbox, spool string, entry []byte) (done bool, err error) {
	if err := os.MkdirAll(spool, 0o700); err != nil {
		return false, fmt.Errorf("not sent: spool folder: %w", err)
	}
	lk, err := lockfile.TryAcquire(inbox+".lock", m.s.lockOptions())
	if errors.Is(err, lockfile.ErrLocked) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("not sent: %w", err)
	}
	err = m.mergeLocked(lk, teamName, agent, inbox, spool, entry)
	_ = lk.Release() // a lock lost after the commit does not undo it
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, lockfile.ErrCompromised):
		return false, nil // taken over before the commit: entry is not in the inbox
	}
	return true, fmt.Errorf("not sent: %w", err)
}

// receipt reports whether the entry spooled at base reached the inbox: it
// was claimed and then removed by a lock holder after the commit. An entry
// whose whole folder vanished (the team was deleted) is an error.
func receipt(base string) (bool, error) {
	for _, suf := range []string{sufMsg, sufClaimed} {
		if _, err := os.Lstat(base + suf); err == nil {
			return false, nil
		}
	}
	if _, err := os.Lstat(base + sufMsg); err == nil {
		return false, nil // renamed between our two looks; look again
	}
	if _, err := os.Lstat(filepath.Dir(base)); err != nil {
		return false, fmt.Errorf("message vanished from the spool (was the team deleted?): %w", mailbox.ErrNoTeam)
	}
	return true, nil
}

// withdraw takes back a spooled entry after cause stopped the send. If a
// lock holder already claimed it, the send is waited for a little longer
// (the holder commits within milliseconds unless it died), woken by kick
// (the sender's spool folder changing) when the caller has a watch on it.
func (m *Mail) withdraw(base string, cause error, kick <-chan struct{}) error {
	err := os.Remove(base + sufMsg)
	if err == nil || errors.Is(err, fs.ErrNotExist) && !exists(base+sufClaimed) && !exists(filepath.Dir(base)) {
		return fmt.Errorf("not sent: %w", cause)
	}
	deadline := time.NewTimer(withdrawGrace)
	defer deadline.Stop()
	recheck := 20 * time.Millisecond // without a watch
	if kick != nil {
		recheck = 250 * time.Millisecond // a safety net: the watch wakes us
	}
	for {
		if done, err := receipt(base); done {
			return nil
		} else if err != nil {
			return fmt.Errorf("not sent: %w", cause)
		}
		t := time.NewTimer(recheck)
		select {
		case <-kick:
		case <-t.C:
		case <-deadline.C:
			t.Stop()
			return fmt.Errorf("%w: message %s is claimed by another inbox writer that has not finished, so it may still land (check the inbox before sending it again): %w",
				mailbox.ErrOutcomeUnknown, filepath.Base(base), cause)
		}
		t.Stop()
	}
}

// mergeLocked merges every spooled entry into the inbox, and own (the
// caller's message, not spooled; nil: none) after them. The caller holds lk.
// If it fails before the inbox is replaced, the entries it claimed are put
// back (.claimed renamed to .msg) for their senders to withdraw or retry; if
// the inbox was replaced and only a later step failed, the merge counts as
// done. Orphans claimed by an earlier holder stay .claimed either way.
func (m *Mail) mergeLocked(lk *lockfile.Lock, teamName, agent, inbox, spool string, own []byte) (err error) {
	s := m.s
	senders, err := os.ReadDir(spool)
	if err != nil {
		return fmt.Errorf("read spool: %w", err)
	}
	var claimed []string // bases of the entries merged now
	read := map[string][]byte{}
	var entries [][]byte
	orphans := false
	now := s.now()
	for _, sd := range senders {
		if !sd.IsDir() {
			continue
		}
		dir := filepath.Join(spool, sd.Name())
		names, err := os.ReadDir(dir)
		if err != nil {
			continue // removed just now
		}
		if len(names) == 0 {
			if info, err := sd.Info(); err == nil && now.Sub(info.ModTime()) > senderTTL {
				os.Remove(dir) // an idle or dead sender's folder; fails if it is in use again
			}
			continue
		}
		for _, de := range names {
			n := de.Name()
			switch {
			case strings.HasSuffix(n, sufMsg):
				base := filepath.Join(dir, strings.TrimSuffix(n, sufMsg))
				b, err := os.ReadFile(base + sufMsg)
				if err != nil || !json.Valid(b) {
					continue // withdrawn, or its sender is still writing it
				}
				if err := os.Rename(base+sufMsg, base+sufClaimed); err != nil {
					continue // withdrawn by its sender just now
				}
				claimed = append(claimed, base)
				read[base] = b
			case strings.HasSuffix(n, sufClaimed):
				orphans = true
				claimed = append(claimed, filepath.Join(dir, strings.TrimSuffix(n, sufClaimed)))
			}
		}
	}
	committed := false
	defer func() {
		if err == nil || committed {
			return
		}
		for base := range read {
			if rerr := os.Rename(base+sufClaimed, base+sufMsg); rerr != nil {
				m.s.log.Warn("put back a spooled message after a failed merge", "entry", base, "err", rerr)
			}
		}
	}()
	// Merge in send order across senders (names start with the send time).
	slices.SortFunc(claimed, func(a, b string) int { return strings.Compare(filepath.Base(a), filepath.Base(b)) })
	for _, base := range claimed {
		b, ok := read[base]
		if !ok {
			var err error
			if b, err = os.ReadFile(base + sufClaimed); err != nil {
				return fmt.Errorf("read spooled message: %w", err)
			}
		}
		entries = append(entries, b)
	}
	if own != nil {
		entries = append(entries, own) // sent now: after everything spooled before
	}

	doc, err := m.loadLocked(teamName, agent, inbox, spool, true)
	if err != nil {
		return err
	}
	if orphans {
		entries = doc.dedupe(entries)
	}
	if err := doc.append(entries, s.opts.KeepRead); err != nil {
		return err
	}
	// Only a failure after the rename counts as written. An inbox that
	// merely looks different was changed by someone else (a writer that
	// took the lock over): nothing of ours is in it.
	if err := m.s.written(m.commitLocked(lk, doc, inbox, spool), "inbox", "file", inbox); err != nil {
		return err
	}
	committed = true
	for _, base := range claimed {
		os.Remove(base + sufClaimed)
	}
	return nil
}

// ensureInbox creates an empty inbox ("[]") if none exists, without ever
// replacing one (link fails if the name is taken).
func ensureInbox(inbox string) error {
	if _, err := os.Lstat(inbox); err == nil {
		return nil
	}
	dir := filepath.Dir(inbox)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create inbox folder: %w", err)
	}
	tmp, err := os.CreateTemp(dir, filepath.Base(inbox)+".tmp.")
	if err != nil {
		return fmt.Errorf("create inbox: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString("[]"); err != nil {
		tmp.Close()
		return fmt.Errorf("create inbox: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("create inbox: %w", err)
	}
	if err := os.Link(tmp.Name(), inbox); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create inbox: %w", err)
	}
	return nil
}

// writeSpool creates a spool entry in dir with one write. It is not
// fsynced: the sender is not told "sent" until the inbox itself is committed
// and fsynced. A holder never merges half of it: it claims an entry only
// after reading a complete JSON object (no prefix of one is one).
func writeSpool(dir, path string, data []byte) error {
	for try := 0; ; try++ {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("spool message: %w", err)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrNotExist) && try < 3 {
			continue // a lock holder removed our idle folder just now
		}
		if err != nil {
			return fmt.Errorf("spool message: %w", err)
		}
		_, werr := f.Write(data)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			os.Remove(path)
			return fmt.Errorf("spool message: %w", werr)
		}
		return nil
	}
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// lockOptions returns the lock options of every lock this store takes.
func (s *Store) lockOptions() lockfile.Options {
	return lockfile.Options{Stale: s.opts.LockStale, Now: s.now, Watcher: s.watch, Logger: s.log}
}
