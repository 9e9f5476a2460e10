package swarm

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/internal/atomicfile"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/store/file"
	"github.com/troupe-dev/troupe/team"
)

// fullDisk makes every atomic write under root fail with ENOSPC while it
// is on.
func fullDisk(t *testing.T, root string) *atomic.Bool {
	var on atomic.Bool
	f := func(path string) error {
		if on.Load() && strings.HasPrefix(path, root) {
			return syscall.ENOSPC
		}
		return nil
	}
	if !atomicfile.WriteFault.CompareAndSwap(nil, &f) {
		t.Fatal("another test holds atomicfile.WriteFault")
	}
	t.Cleanup(func() { atomicfile.WriteFault.Store(nil) })
	return &on
}

// fileMail opens a file store in a fresh folder with team "t" of lead
// and ann.
func fileMail(t *testing.T) (*file.Store, string) {
	root := t.TempDir()
	st, err := file.Open(root, file.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ctx := context.Background()
	if _, err := team.Create(ctx, st.Teams(), team.CreateOptions{Name: "t", SessionID: "s", Now: time.Now(), Pick: func(int) int { return 0 }}); err != nil {
		t.Fatal(err)
	}
	if _, err := team.AddMember(ctx, st.Teams(), "t", team.Member{AgentID: "ann@t", Name: "ann"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	return st, root
}

// An idle notification sent while the disk is full is delivered once
// there is room again, and the failure is on the timeline meanwhile.
func TestRetryFullDeliversOnceThereIsRoom(t *testing.T) {
	st, root := fileMail(t)
	full := fullDisk(t, root)
	events := make(chan Event, 16)
	mail := RetryFull(st.Mail(), "ann", nil, func(e Event) { events <- e })
	text, _ := mailbox.Encode(mailbox.IdleNotification{From: "ann", IdleReason: mailbox.IdleAvailable, Result: "REPORT"})
	full.Store(true)
	sent := make(chan error, 1)
	go func() {
		_, err := mail.Send(context.Background(), "t", team.LeadName, mailbox.Message{From: "ann", Text: text})
		sent <- err
	}()
	e := <-events
	if e.Agent != "ann" || e.Kind != EventWarning || !strings.Contains(e.Text, "disk full: the idle_notification to team-lead is not delivered yet") ||
		!strings.Contains(e.Text, "no space left on device") {
		t.Errorf("event = %+v; want the disk-full warning", e)
	}
	if msgs, err := st.Mail().Read(context.Background(), "t", team.LeadName, false); err != nil || len(msgs) != 0 {
		t.Fatalf("lead's inbox while the disk is full = %v, %v; want empty", msgs, err)
	}
	full.Store(false)
	if err := <-sent; err != nil {
		t.Fatalf("Send = %v; want delivered once there is room", err)
	}
	if e := <-events; !strings.Contains(e.Text, "disk has room again: the idle_notification to team-lead delivered after") {
		t.Errorf("event = %+v; want the recovery", e)
	}
	msgs, err := st.Mail().Read(context.Background(), "t", team.LeadName, false)
	if err != nil || len(msgs) != 1 || msgs[0].Text != text {
		t.Errorf("lead's inbox = %v, %v; want the idle notification once", msgs, err)
	}
}

// A send the disk keeps refusing ends with its context, saying both.
func TestRetryFullEndsWithContext(t *testing.T) {
	st, root := fileMail(t)
	fullDisk(t, root).Store(true)
	events := make(chan Event, 16)
	mail := RetryFull(st.Mail(), "ann", nil, func(e Event) { events <- e })
	ctx, cancel := context.WithCancel(context.Background())
	sent := make(chan error, 1)
	go func() {
		_, err := mail.Send(ctx, "t", team.LeadName, mailbox.Message{From: "ann", Text: "hello"})
		sent <- err
	}()
	<-events // failing
	cancel()
	err := <-sent
	if !errors.Is(err, context.Canceled) || !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("Send = %v; want canceled and ENOSPC", err)
	}
	if e := <-events; !strings.Contains(e.Text, "gave up delivering a message to team-lead") {
		t.Errorf("event = %+v; want the give-up", e)
	}
	// Other errors are not retried.
	if _, err := mail.Send(context.Background(), "t", "nobody", mailbox.Message{From: "ann", Text: "x"}); err == nil || DiskFull(err) {
		t.Errorf("Send to nobody = %v; want its own error at once", err)
	}
}
