package file

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/mailbox"
)

// inotifyFDs counts this process's inotify instances.
func inotifyFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && l == "anon_inode:inotify" {
			n++
		}
	}
	return n
}

// R14 (docs/benchmarks.md, "The peer's scenarios"): the watcher under load. 128 agents
// each wait on their inbox with Watch, and 4 writers send 128 messages
// as fast as they can; every write replaces an inbox by rename. The store
// uses one inotify instance for all of them, and every agent reads every
// message sent to it, exactly once. (The rescan after a kernel queue
// overflow is internal/dirwatch's TestOverflowKicksEveryone.)
func TestR14WatcherUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("128 messages to 128 agents")
	}
	const agents, writers, perWriter = 128, 4, 32
	names := make([]string, agents)
	for i := range names {
		names[i] = fmt.Sprintf("w%03d", i)
	}
	fds := inotifyFDs(t)
	s := mbOpen(t, Options{}, append(names, "sender")...)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()

	var mu sync.Mutex
	got := map[string]map[string]int{} // agent -> text -> times read
	want := map[string]map[string]bool{}
	var readers sync.WaitGroup
	done := make(chan struct{})
	kicks := make([]<-chan struct{}, agents)
	for i, name := range names {
		ch, err := s.Mail().Watch(ctx, "crew", name)
		if err != nil {
			t.Fatal(err)
		}
		kicks[i] = ch
		got[name] = map[string]int{}
		want[name] = map[string]bool{}
	}
	if n := inotifyFDs(t) - fds; n != 1 {
		t.Errorf("%d inotify instances for 128 watched inboxes, want 1", n)
	}
	for i, name := range names {
		readers.Go(func() {
			drain := func() {
				msgs, err := s.Mail().Read(ctx, "crew", name, true)
				if err != nil {
					t.Errorf("read %s: %v", name, err)
					return
				}
				ids := make([]string, len(msgs))
				mu.Lock()
				for j, m := range msgs {
					got[name][m.Text]++
					ids[j] = m.ID
				}
				mu.Unlock()
				if len(ids) > 0 {
					if _, err := s.Mail().MarkRead(ctx, "crew", name, ids); err != nil {
						t.Errorf("mark read %s: %v", name, err)
					}
				}
			}
			for {
				select {
				case _, ok := <-kicks[i]:
					if !ok {
						return
					}
					drain()
				case <-done:
					drain() // whatever landed after the last kick
					return
				}
			}
		})
	}
	start := time.Now()
	var senders sync.WaitGroup
	for w := range writers {
		senders.Go(func() {
			for k := range perWriter {
				to := names[(w*perWriter+k*7)%agents]
				text := fmt.Sprintf("m-%d-%d", w, k)
				if _, err := s.Mail().Send(ctx, "crew", to, mailbox.Message{From: "sender", Text: text}); err != nil {
					t.Errorf("send %s: %v", text, err)
					return
				}
				mu.Lock()
				want[to][text] = true
				mu.Unlock()
			}
		})
	}
	senders.Wait()
	elapsed := time.Since(start)
	// Every message must arrive by the watch: wait until all are read
	// before telling the readers to stop.
	deadline := time.After(time.Minute)
	for {
		mu.Lock()
		missing := 0
		for name, texts := range want {
			for text := range texts {
				if got[name][text] == 0 {
					missing++
				}
			}
		}
		mu.Unlock()
		if missing == 0 {
			break
		}
		select {
		case <-deadline:
			t.Fatalf("%d messages were never read through the watch", missing)
		case <-time.After(20 * time.Millisecond):
		}
	}
	close(done)
	readers.Wait()
	t.Logf("%d messages to %d agents in %v (%.0f writes/s)", writers*perWriter, agents, elapsed.Round(time.Millisecond), float64(writers*perWriter)/elapsed.Seconds())
	for name, texts := range got {
		for text, n := range texts {
			if n != 1 {
				t.Errorf("%s read %q %d times", name, text, n)
			}
		}
	}
}
