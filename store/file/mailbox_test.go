package file

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
	"sync/atomic"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/internal/atomicfile"
	"github.com/troupe-dev/troupe/internal/lockfile"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/team"
)

// mbOpen opens a store in a temp folder with a team "crew" whose members
// are team-lead plus the given names.
func mbOpen(t *testing.T, opts Options, members ...string) *Store {
	t.Helper()
	s, err := Open(t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx := t.Context()
	if _, err := team.Create(ctx, s.Teams(), team.CreateOptions{Name: "crew", Now: time.Now(), Pick: rand.IntN}); err != nil {
		t.Fatal(err)
	}
	for _, m := range members {
		if _, err := team.AddMember(ctx, s.Teams(), "crew", team.Member{Name: m}, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func TestMailSendReadMarkRead(t *testing.T) {
	s := mbOpen(t, Options{}, "alice", "bob")
	ctx := t.Context()
	d, err := s.Mail().Send(ctx, "crew", "alice", mailbox.Message{From: "bob", Text: "hello", Summary: "hi"})
	if err != nil {
		t.Fatalf("Send = %v", err)
	}
	if len(d) != 1 || d[0].To != "alice" || d[0].ID == "" {
		t.Fatalf("Send deliveries = %+v; want one to alice with an id", d)
	}
	msgs, err := s.Mail().Read(ctx, "crew", "alice", true)
	if err != nil || len(msgs) != 1 || msgs[0].Text != "hello" || msgs[0].ID != d[0].ID {
		t.Fatalf("Read = %+v, %v; want the message", msgs, err)
	}
	n, err := s.Mail().MarkRead(ctx, "crew", "alice", []string{d[0].ID, "nope"})
	if err != nil || n != 1 {
		t.Fatalf("MarkRead = %d, %v; want 1, nil", n, err)
	}
	msgs, _ = s.Mail().Read(ctx, "crew", "alice", true)
	if len(msgs) != 0 {
		t.Fatalf("Read(unread) after MarkRead = %d messages; want 0", len(msgs))
	}
	_, err = s.Mail().Send(ctx, "crew", "alcie", mailbox.Message{From: "bob", Text: "x"})
	var ue *mailbox.UnknownRecipientError
	if !errors.As(err, &ue) {
		t.Fatalf("Send to a misspelled name = %v; want *UnknownRecipientError", err)
	}
	if _, err := os.Stat(s.inboxPath("crew", "alcie")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an inbox was created for the misspelled name (stat: %v)", err)
	}
}

func TestMailConcurrentSendersGroupCommit(t *testing.T) {
	s := mbOpen(t, Options{}, "lead2", "w")
	ctx := t.Context()
	const senders, each = 16, 40
	var wg sync.WaitGroup
	errs := make(chan error, senders*each)
	for i := range senders {
		wg.Go(func() {
			for j := range each {
				if _, err := s.Mail().Send(ctx, "crew", "w", mailbox.Message{From: "lead2", Text: fmt.Sprintf("%d/%d", i, j)}); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("Send: %v", err)
	}
	msgs, err := s.Mail().Read(ctx, "crew", "w", false)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != senders*each {
		t.Fatalf("inbox holds %d messages; want %d", len(msgs), senders*each)
	}
	last := make(map[string]int)
	seen := make(map[string]bool)
	for _, m := range msgs {
		if seen[m.Text] {
			t.Errorf("duplicate message %q", m.Text)
		}
		seen[m.Text] = true
		var i, j int
		fmt.Sscanf(m.Text, "%d/%d", &i, &j)
		k := fmt.Sprint(i)
		if prev, ok := last[k]; ok && j <= prev {
			t.Errorf("sender %d: message %d after %d; want send order", i, j, prev)
		}
		last[k] = j
	}
	left, _ := filepath.Glob(filepath.Join(s.Mail().spoolDir("crew", "w"), "*", "*"))
	for _, f := range left {
		if !strings.HasSuffix(f, validHint) {
			t.Errorf("spool entry left behind: %s", f)
		}
	}
	_ = context.Background
}

// A send that meets a free lock goes straight into the inbox: nothing of
// it is ever spooled (the sender's spool folder is not even made), and
// what others spooled before it lands first, in order.
func TestMailDirectSend(t *testing.T) {
	s := mbOpen(t, Options{}, "lead2", "w")
	ctx := t.Context()
	spool := s.Mail().spoolDir("crew", "w")
	other, err := mailbox.Prepare(mailbox.Message{From: "lead2", Text: "spooled first"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	otherData, _ := json.Marshal(other)
	otherBase := filepath.Join(spool, "4242-0123456789ab", fmt.Sprintf("%020d-%s", time.Now().UnixNano(), other.ID))
	if err := writeSpool(filepath.Dir(otherBase), otherBase+sufMsg, otherData); err != nil {
		t.Fatal(err)
	}
	var created []string
	s.inboxCommitHook = func(string) error {
		ents, _ := os.ReadDir(spool)
		for _, e := range ents {
			created = append(created, e.Name())
		}
		return nil
	}
	if _, err := s.Mail().Send(ctx, "crew", "w", mailbox.Message{From: "team-lead", Text: "direct"}); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(created, s.sender) {
		t.Errorf("the spool held %v at the commit; a direct send makes no folder of its own (%s)", created, s.sender)
	}
	texts := inboxTexts(t, s, "w")
	if want := []string{"spooled first", "direct"}; !slices.Equal(texts, want) {
		t.Errorf("inbox = %q; want %q", texts, want)
	}
	if exists(otherBase+sufMsg) || exists(otherBase+sufClaimed) {
		t.Errorf("the other sender's entry is still spooled after the merge")
	}
}

// A direct send whose lock is taken over before it commits has put
// nothing in the inbox: it falls back to the spool and lands once.
func TestMailDirectSendLosesLock(t *testing.T) {
	s := mbOpen(t, Options{}, "w")
	ctx := t.Context()
	var calls atomic.Int32
	s.inboxCommitHook = func(string) error {
		if calls.Add(1) == 1 {
			return fmt.Errorf("taken over: %w", lockfile.ErrCompromised)
		}
		return nil
	}
	if _, err := s.Mail().Send(ctx, "crew", "w", mailbox.Message{From: "team-lead", Text: "once"}); err != nil {
		t.Fatalf("Send = %v; want it delivered through the spool", err)
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("%d commits; want the lost one and the spooled one", n)
	}
	msgs, err := s.Mail().Read(ctx, "crew", "w", false)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 || msgs[0].Text != "once" {
		t.Errorf("inbox = %+v; want the message exactly once", msgs)
	}
}

// A writer that takes the inbox over while a send holds the lock (a
// peer that judged the lock stale) changes the inbox under it: the send
// must not count that as its own commit. It sends again, and both
// messages are in the inbox; before, the send was acknowledged and lost.
func TestMailInboxChangedUnderLock(t *testing.T) {
	s := mbOpen(t, Options{}, "w")
	ctx := t.Context()
	path := s.inboxPath("crew", "w")
	var calls atomic.Int32
	s.inboxCommitHook = func(string) error {
		if calls.Add(1) == 1 {
			intruder := `[{"from":"peer","text":"written over the lock","timestamp":"2026-12-03T10:00:00.000Z","read":false}]`
			if err := atomicfile.WriteFile(path, []byte(intruder), 0o600, atomicfile.Options{}); err != nil {
				return err
			}
		}
		return nil
	}
	if _, err := s.Mail().Send(ctx, "crew", "w", mailbox.Message{From: "team-lead", Text: "mine"}); err != nil {
		t.Fatalf("Send = %v", err)
	}
	texts := inboxTexts(t, s, "w")
	if want := []string{"written over the lock", "mine"}; !slices.Equal(texts, want) {
		t.Errorf("inbox = %q; want %q: an acknowledged send must be in the inbox", texts, want)
	}
}

// inboxTexts returns the texts of every message in to's inbox of crew, in
// order.
func inboxTexts(t *testing.T, s *Store, to string) []string {
	t.Helper()
	msgs, err := s.Mail().Read(t.Context(), "crew", to, false)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, m := range msgs {
		texts = append(texts, m.Text)
	}
	return texts
}
