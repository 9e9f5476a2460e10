package file

// Reliability tests R1-R7 and R12 of docs/benchmarks.md, "The peer's scenarios", for
// inboxes. Each fault is real: SIGKILL, SIGSTOP, torn in-place writes by a
// peer, corrupt files.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/internal/atomicfile"
	"github.com/troupe-dev/troupe/internal/lockfile"
	"github.com/troupe-dev/troupe/mailbox"
)

// mbSendAll sends n messages from each of k goroutines and returns the ids
// acknowledged; any send error fails the test.
func mbSendAll(t *testing.T, s *Store, to string, k, n int) map[string]bool {
	t.Helper()
	var mu sync.Mutex
	acked := map[string]bool{}
	var wg sync.WaitGroup
	for g := range k {
		wg.Go(func() {
			for i := range n {
				d, err := s.Mail().Send(t.Context(), "crew", to, mailbox.Message{From: "lead2", Text: fmt.Sprintf("g%d#%d", g, i)})
				if err != nil {
					t.Errorf("Send g%d#%d: %v", g, i, err)
					continue
				}
				mu.Lock()
				acked[d[0].ID] = true
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return acked
}

// mbCheckAll fails unless every acked id is in the inbox exactly once.
func mbCheckAll(t *testing.T, s *Store, to string, acked map[string]bool) {
	t.Helper()
	msgs, err := s.Mail().Read(t.Context(), "crew", to, false)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	seen := map[string]int{}
	for _, m := range msgs {
		seen[m.ID]++
	}
	lost := 0
	for id := range acked {
		switch seen[id] {
		case 0:
			lost++
		case 1:
		default:
			t.Errorf("message %s stored %d times", id, seen[id])
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d acknowledged messages lost", lost, len(acked))
	}
}

// R1: a writer killed with SIGKILL while it holds the inbox lock. No
// accepted message is lost; senders proceed once the lock is stale.
func TestMailR1HolderKilled(t *testing.T) {
	stale := 2 * time.Second
	s := mbOpen(t, Options{LockStale: stale}, "lead2", "w")
	if err := ensureInbox(s.inboxPath("crew", "w")); err != nil {
		t.Fatal(err)
	}
	c := mbStart(t, mbSpec{Role: "hold", Root: s.Root(), To: "w", LockStale: stale})
	c.expect(t, "held")
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	c.cmd.Wait()
	if _, err := os.Stat(s.inboxPath("crew", "w") + ".lock"); err != nil {
		t.Fatalf("the killed holder's lock directory is gone (%v); the test needs it left behind", err)
	}
	acked := mbSendAll(t, s, "w", 4, 10)
	if len(acked) != 40 {
		t.Fatalf("%d sends acknowledged; want 40", len(acked))
	}
	mbCheckAll(t, s, "w", acked)
}

// R2: the lock holder is paused (SIGSTOP) past the stale time while others
// take the lock over and write; when it resumes, its commit of the old
// snapshot is refused and no acknowledged message is lost.
func TestMailR2PausedHolderNeverOverwrites(t *testing.T) {
	stale := 2 * time.Second
	s := mbOpen(t, Options{LockStale: stale}, "lead2", "w")
	pre := mbSendAll(t, s, "w", 1, 5)
	c := mbStart(t, mbSpec{Role: "stale-writer", Root: s.Root(), From: "paused", To: "w", LockStale: stale})
	c.expect(t, "loaded")
	if err := c.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	acked := mbSendAll(t, s, "w", 4, 10) // waits out the stale time, then takes over
	if err := c.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(c.stdin, "go")
	res := c.expect(t, "commit")
	if !strings.HasPrefix(res, "commit-refused") {
		t.Errorf("paused holder's commit: %q; want it refused", res)
	}
	for id := range pre {
		acked[id] = true
	}
	mbCheckAll(t, s, "w", acked)
}

// R3: a sender killed at random moments never leaves an invalid inbox.
func TestMailR3KilledMidWrite(t *testing.T) {
	s := mbOpen(t, Options{}, "lead2", "w")
	pre := mbSendAll(t, s, "w", 1, 200) // a few hundred KB of inbox
	_ = pre
	for trial := range 15 {
		c := mbStart(t, mbSpec{Role: "send", Root: s.Root(), From: fmt.Sprintf("k%d", trial), To: "w", N: -1})
		c.expect(t, "sent")
		time.Sleep(time.Duration(rand.IntN(30)) * time.Millisecond) // a random moment, not a wait for an event
		c.cmd.Process.Signal(syscall.SIGKILL)
		c.cmd.Wait()
		data, err := os.ReadFile(s.inboxPath("crew", "w"))
		if err != nil {
			t.Fatal(err)
		}
		if err := checkArray(data); err != nil {
			t.Fatalf("trial %d: inbox invalid after SIGKILL: %v", trial, err)
		}
		// A child killed while holding the lock leaves it behind; R1
		// covers waiting that out, so clear it here to keep the test fast.
		os.Remove(s.inboxPath("crew", "w") + ".lock")
	}
	// Whatever the killed senders left in the spool is merged (or dropped
	// as withdrawn) by the next sender, and the inbox stays readable.
	mbSendAll(t, s, "w", 1, 1)
	if _, err := s.Mail().Read(t.Context(), "crew", "w", false); err != nil {
		t.Fatalf("Read after kills: %v", err)
	}
}

// R4: a corrupt inbox is moved aside with its content intact; new messages
// still land; Read reports the corruption once.
func TestMailR4CorruptInbox(t *testing.T) {
	s := mbOpen(t, Options{}, "lead2", "w")
	path := s.inboxPath("crew", "w")
	garbage := []byte(`[{"from":"x","text":"half a mess`)
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, garbage, 0o600); err != nil {
		t.Fatal(err)
	}
	acked := mbSendAll(t, s, "w", 1, 3)
	mbCheckAll(t, s, "w", acked)
	moved, _ := filepath.Glob(path + ".corrupt-*")
	if len(moved) != 1 {
		t.Fatalf("corrupt copies = %v; want exactly one", moved)
	}
	if got, _ := os.ReadFile(moved[0]); string(got) != string(garbage) {
		t.Errorf("moved-aside content = %q; want the original %q", got, garbage)
	}

	if err := os.WriteFile(path, []byte("{not an array"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := s.Mail().Read(t.Context(), "crew", "w", false)
	var ce *mailbox.CorruptError
	if !errors.As(err, &ce) || !errors.Is(err, mailbox.ErrCorrupt) || ce.MovedTo == "" {
		t.Fatalf("Read of a corrupt inbox = %v; want *CorruptError naming where it went", err)
	}
	if !strings.Contains(err.Error(), ce.MovedTo) {
		t.Errorf("error %q does not name %s", err, ce.MovedTo)
	}
	msgs, err := s.Mail().Read(t.Context(), "crew", "w", false)
	if err != nil || len(msgs) != 0 {
		t.Fatalf("Read after quarantine = %d msgs, %v; want a fresh empty inbox", len(msgs), err)
	}
}

// R5: reads never see a torn file as empty or partial, even while a peer
// rewrites the inbox in place (truncate, then write) under the lock, as
// Claude Code's legacy writer does.
func TestMailR5TornReadsRetried(t *testing.T) {
	s := mbOpen(t, Options{}, "lead2", "w")
	path := s.inboxPath("crew", "w")
	mk := func(n int) []byte {
		var msgs []mailbox.Message
		for i := range n {
			msgs = append(msgs, mailbox.Message{ID: mailbox.NewID(), From: "peer", Text: strings.Repeat("x", 2000) + fmt.Sprint(i), Timestamp: time.Now()})
		}
		b, _ := json.MarshalIndent(msgs, "", "  ")
		return b
	}
	versions := [][]byte{mk(40), mk(80)}
	os.MkdirAll(filepath.Dir(path), 0o755)
	os.WriteFile(path, versions[0], 0o600)
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ctx.Err() == nil; i++ {
			lk, err := lockfile.Acquire(ctx, path+".lock", s.lockOptions())
			if err != nil {
				return
			}
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0o600)
			if err == nil {
				v := versions[i%2]
				f.Write(v[:len(v)/2])
				f.Write(v[len(v)/2:])
				f.Close()
			}
			lk.Release()
			time.Sleep(5 * time.Millisecond) // a busy peer, not a spinning one
		}
	})
	for range 100 {
		msgs, err := s.Mail().Read(t.Context(), "crew", "w", false)
		if err != nil {
			t.Errorf("Read during in-place rewrites: %v", err)
			break
		}
		if len(msgs) != 40 && len(msgs) != 80 {
			t.Errorf("Read saw %d messages; want 40 or 80 (a whole version)", len(msgs))
		}
	}
	cancel()
	wg.Wait()
}

// R6: a reader that reads unread messages and marks exactly those read,
// while writers append, delivers every message exactly once.
func TestMailR6MarkExactlyDelivered(t *testing.T) {
	s := mbOpen(t, Options{KeepRead: 50}, "lead2", "w")
	ctx := t.Context()
	const total = 4 * 50
	var delivered sync.Map
	count := 0
	done := make(chan map[string]bool)
	go func() { done <- mbSendAll(t, s, "w", 4, 50) }()
	kick, err := s.Mail().Watch(ctx, "crew", "w")
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.After(60 * time.Second)
	for count < total {
		msgs, err := s.Mail().Read(ctx, "crew", "w", true)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, m := range msgs {
			if _, dup := delivered.LoadOrStore(m.ID, true); dup {
				t.Fatalf("message %s delivered twice", m.ID)
			}
			ids = append(ids, m.ID)
			count++
		}
		if n, err := s.Mail().MarkRead(ctx, "crew", "w", ids); err != nil || n != len(ids) {
			t.Fatalf("MarkRead(%d ids) = %d, %v", len(ids), n, err)
		}
		if count >= total {
			break
		}
		select {
		case <-kick:
		case <-deadline:
			t.Fatalf("delivered %d of %d within 60s", count, total)
		}
	}
	acked := <-done
	for id := range acked {
		if _, ok := delivered.Load(id); !ok {
			t.Errorf("acknowledged message %s never delivered", id)
		}
	}
}

// R7: when the lock cannot be taken in time the sender gets an error, and
// the message does not land later.
func TestMailR7LockTimeoutIsAnError(t *testing.T) {
	s := mbOpen(t, Options{LockTimeout: 300 * time.Millisecond}, "lead2", "w")
	path := s.inboxPath("crew", "w")
	if err := ensureInbox(path); err != nil {
		t.Fatal(err)
	}
	lk, err := lockfile.Acquire(t.Context(), path+".lock", s.lockOptions())
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Mail().Send(t.Context(), "crew", "w", mailbox.Message{From: "lead2", Text: "late"})
	if err == nil || !strings.Contains(err.Error(), "not sent") {
		t.Fatalf("Send while the lock is held = %v; want a 'not sent' error", err)
	}
	lk.Release()
	acked := mbSendAll(t, s, "w", 1, 1)
	msgs, _ := s.Mail().Read(t.Context(), "crew", "w", false)
	for _, m := range msgs {
		if m.Text == "late" {
			t.Errorf("a send that reported an error landed anyway")
		}
	}
	mbCheckAll(t, s, "w", acked)
}

// A write that fails after the inbox lock is taken (a full disk) makes
// Send fail, and that failure means "not delivered": the message does not
// land later, and the entries of other senders the failed writer claimed
// are put back for them, not lost and not duplicated.
func TestMailWriteFailureIsNotDelivered(t *testing.T) {
	s := mbOpen(t, Options{}, "lead2", "w")
	ctx := t.Context()
	path := s.inboxPath("crew", "w")
	if err := ensureInbox(path); err != nil {
		t.Fatal(err)
	}
	// Another sender's entry, spooled and waiting for a lock holder.
	other, err := mailbox.Prepare(mailbox.Message{From: "lead2", Text: "other sender"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	otherData, _ := json.Marshal(other)
	otherBase := filepath.Join(s.Mail().spoolDir("crew", "w"), "4242-0123456789ab", fmt.Sprintf("%020d-%s", time.Now().UnixNano(), other.ID))
	if err := writeSpool(filepath.Dir(otherBase), otherBase+sufMsg, otherData); err != nil {
		t.Fatal(err)
	}

	full := fmt.Errorf("write inbox: %w", syscall.ENOSPC)
	s.inboxCommitHook = func(string) error { return full }
	_, err = s.Mail().Send(ctx, "crew", "w", mailbox.Message{From: "lead2", Text: "disk full"})
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "not sent") || errors.Is(err, mailbox.ErrOutcomeUnknown) {
		t.Fatalf("Send on a full disk = %v; want a 'not sent' error wrapping ENOSPC", err)
	}
	if !exists(otherBase+sufMsg) || exists(otherBase+sufClaimed) {
		t.Errorf("the other sender's entry was not put back to %s after the failed write", otherBase+sufMsg)
	}

	s.inboxCommitHook = nil
	if _, err := s.Mail().Send(ctx, "crew", "w", mailbox.Message{From: "lead2", Text: "after"}); err != nil {
		t.Fatalf("Send after the disk has room = %v", err)
	}
	texts := inboxTexts(t, s, "w")
	if want := []string{"other sender", "after"}; !slices.Equal(texts, want) {
		t.Errorf("inbox = %q; want %q (the failed send must not land, the other sender's must land once)", texts, want)
	}
}

// A sender whose entry another writer claimed and never committed (it died
// holding the lock) cannot tell whether the message will land: its error
// says so with mailbox.ErrOutcomeUnknown, unlike every other send error.
func TestMailClaimedByStuckHolderIsOutcomeUnknown(t *testing.T) {
	s := mbOpen(t, Options{LockTimeout: 300 * time.Millisecond}, "lead2", "w")
	path := s.inboxPath("crew", "w")
	if err := ensureInbox(path); err != nil {
		t.Fatal(err)
	}
	lk, err := lockfile.Acquire(t.Context(), path+".lock", s.lockOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Release()
	errc := make(chan error, 1)
	go func() {
		_, err := s.Mail().Send(t.Context(), "crew", "w", mailbox.Message{From: "lead2", Text: "taken"})
		errc <- err
	}()
	// Play the holder: claim the entry as soon as it is spooled.
	pattern := filepath.Join(s.Mail().spoolDir("crew", "w"), "*", "*"+sufMsg)
	for claimed := false; !claimed; {
		ms, _ := filepath.Glob(pattern)
		for _, m := range ms {
			claimed = os.Rename(m, strings.TrimSuffix(m, sufMsg)+sufClaimed) == nil
		}
		select {
		case err := <-errc:
			t.Fatalf("Send returned %v before its entry could be claimed", err)
		case <-time.After(time.Millisecond):
		}
	}
	err = <-errc
	if !errors.Is(err, mailbox.ErrOutcomeUnknown) {
		t.Errorf("Send whose entry a stuck holder claimed = %v; want ErrOutcomeUnknown", err)
	}
}

// R12: read messages are pruned beyond the retention bound, so the cost of
// a write stays bounded; unread ones are never pruned.
func TestMailR12Retention(t *testing.T) {
	const keep = 10
	s := mbOpen(t, Options{KeepRead: keep}, "lead2", "w")
	ctx := t.Context()
	acked := mbSendAll(t, s, "w", 1, 60)
	var ids []string
	for id := range acked {
		ids = append(ids, id)
	}
	if n, err := s.Mail().MarkRead(ctx, "crew", "w", ids[:50]); err != nil || n != 50 {
		t.Fatalf("MarkRead = %d, %v; want 50", n, err)
	}
	mbSendAll(t, s, "w", 1, 5)
	msgs, err := s.Mail().Read(ctx, "crew", "w", false)
	if err != nil {
		t.Fatal(err)
	}
	read, unread := 0, 0
	for _, m := range msgs {
		if m.Read {
			read++
		} else {
			unread++
		}
	}
	if read != keep || unread != 15 {
		t.Errorf("after pruning: %d read, %d unread; want %d read, 15 unread", read, unread, keep)
	}
}

// Writers in several processes and goroutines at once: nothing lost,
// nothing duplicated, each sender's order kept.
func TestMailCrossProcessWriters(t *testing.T) {
	s := mbOpen(t, Options{}, "lead2", "w")
	var children []*mbChild
	for i := range 4 {
		children = append(children, mbStart(t, mbSpec{Role: "send", Root: s.Root(), From: fmt.Sprintf("p%d", i), To: "w", N: 40}))
	}
	acked := mbSendAll(t, s, "w", 4, 40)
	for _, c := range children {
		for {
			l := c.expect(t, "")
			if l == "done" {
				break
			}
			if strings.HasPrefix(l, "err") {
				t.Errorf("child send failed: %s", l)
				continue
			}
			acked[strings.Fields(l)[1]] = true
		}
	}
	if len(acked) != 320 {
		t.Errorf("%d sends acknowledged; want 320", len(acked))
	}
	mbCheckAll(t, s, "w", acked)
	msgs, _ := s.Mail().Read(t.Context(), "crew", "w", false)
	last := map[string]int{}
	for _, m := range msgs {
		if m.From == "lead2" {
			continue
		}
		var i int
		fmt.Sscanf(strings.TrimPrefix(m.Text, m.From+"#"), "%d", &i)
		if p, ok := last[m.From]; ok && i <= p {
			t.Errorf("%s: message %d stored after %d", m.From, i, p)
		}
		last[m.From] = i
	}
}

// An inbox surrounded by white space that JSON refuses (\v, \f, Unicode
// spaces) is corrupt for every path: a read reports it, it is moved aside
// whole, and sends go on into a fresh inbox. Before, the lock's check
// trimmed it as valid while reads refused it, so nothing in it was ever
// read and a send appended to it (cutting a no-break space in half).
func TestMailStrayWhiteSpaceIsCorrupt(t *testing.T) {
	old := `{"from":"bob","text":"old","timestamp":"2026-12-05T10:00:00Z","msg_id":"m0","read":false}`
	for name, content := range map[string]string{
		"leading vertical tab":           "\v[]",
		"trailing form feed":             "[]\f",
		"trailing no-break space":        "[]\u00a0",
		"a message, then a NEL (U+0085)": "[" + old + "]\u0085",
	} {
		t.Run(name, func(t *testing.T) {
			s := mbOpen(t, Options{}, "lead2", "w")
			ctx := t.Context()
			path := s.inboxPath("crew", "w")
			os.MkdirAll(filepath.Dir(path), 0o755)
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Mail().Send(ctx, "crew", "w", mailbox.Message{From: "bob", Text: "new"}); err != nil {
				t.Fatalf("Send = %v", err)
			}
			moved, _ := filepath.Glob(path + ".corrupt-*")
			if len(moved) != 1 {
				t.Fatalf("corrupt copies = %v; want exactly one", moved)
			}
			if got, _ := os.ReadFile(moved[0]); string(got) != content {
				t.Errorf("moved-aside content = %q; want the original %q", got, content)
			}
			data, _ := os.ReadFile(path)
			if !json.Valid(data) {
				t.Errorf("inbox after the send is not valid JSON: %q", data)
			}
			msgs, err := s.Mail().Read(ctx, "crew", "w", true)
			if err != nil || len(msgs) != 1 || msgs[0].Text != "new" {
				t.Errorf("Read = %+v, %v; want the one new message", msgs, err)
			}
		})
	}
}

// A file that the spool's validity hint vouches for but that is not
// valid (written by a build that let stray white space through) is moved
// aside by a read, not refused by every read forever.
func TestMailReadChecksPastHint(t *testing.T) {
	s := mbOpen(t, Options{}, "lead2", "w")
	ctx := t.Context()
	if _, err := s.Mail().Send(ctx, "crew", "w", mailbox.Message{From: "bob", Text: "first"}); err != nil {
		t.Fatal(err)
	}
	path := s.inboxPath("crew", "w")
	bad := []byte("[],\n  {\"from\":\"bob\",\"text\":\"stuck\"}\n]")
	if err := os.WriteFile(path, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	id, err := atomicfile.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.Mail().spoolDir("crew", "w"), validHint), []byte(identityKey(id)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = s.Mail().Read(ctx, "crew", "w", true)
	var ce *mailbox.CorruptError
	if !errors.As(err, &ce) {
		t.Fatalf("Read of an invalid inbox its hint vouched for = %v; want *CorruptError", err)
	}
	if got, _ := os.ReadFile(ce.MovedTo); string(got) != string(bad) {
		t.Errorf("moved-aside content = %q; want %q", got, bad)
	}
	if msgs, err := s.Mail().Read(ctx, "crew", "w", true); err != nil || len(msgs) != 0 {
		t.Errorf("Read after = %d msgs, %v; want a fresh empty inbox", len(msgs), err)
	}
}

// "read" counts only spelled so, in Read, MarkRead and pruning alike (as
// Claude Code's read === true): an entry with "Read": true is unread for
// all three, where pruning used to delete it as read.
func TestMailReadKeySpelledExactly(t *testing.T) {
	s := mbOpen(t, Options{KeepRead: -1}, "lead2", "w")
	ctx := t.Context()
	path := s.inboxPath("crew", "w")
	entry := `{"from":"bob","text":"%s","timestamp":"2026-12-05T10:00:00Z","msg_id":"%s","read":false%s}`
	content := "[" + fmt.Sprintf(entry, "one", "m1", `,"Read":true`) + "," + fmt.Sprintf(entry, "two", "m2", "") + "]"
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if msgs, err := s.Mail().Read(ctx, "crew", "w", true); err != nil || len(msgs) != 2 {
		t.Fatalf("Read = %d msgs, %v; want both unread", len(msgs), err)
	}
	// Marking m2 read prunes every read entry (KeepRead -1 keeps none):
	// m1 must stay.
	if n, err := s.Mail().MarkRead(ctx, "crew", "w", []string{"m2"}); err != nil || n != 1 {
		t.Fatalf("MarkRead(m2) = %d, %v; want 1", n, err)
	}
	msgs, err := s.Mail().Read(ctx, "crew", "w", true)
	if err != nil || len(msgs) != 1 || msgs[0].ID != "m1" {
		t.Fatalf("unread after marking m2 = %+v, %v; want m1 alone", msgs, err)
	}
	if n, err := s.Mail().MarkRead(ctx, "crew", "w", []string{"m1"}); err != nil || n != 1 {
		t.Errorf("MarkRead(m1) = %d, %v; want 1", n, err)
	}
	if msgs, err := s.Mail().Read(ctx, "crew", "w", true); err != nil || len(msgs) != 0 {
		t.Errorf("unread after marking both = %d, %v; want none", len(msgs), err)
	}
}
