package swarm

import (
	"context"
	"errors"
	"iter"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/store/mem"
	"github.com/troupe-dev/troupe/team"
)

// hookTeams calls hook before each team update (numbered from 1 after
// arm); a non-nil error fails the update. hook may block. done counts the
// updates that ended since arm, failed or not.
type hookTeams struct {
	team.Store
	mu   sync.Mutex
	n    int
	done int
	hook func(ctx context.Context, n int) error
}

func (h *hookTeams) arm(hook func(ctx context.Context, n int) error) {
	h.mu.Lock()
	h.n, h.done, h.hook = 0, 0, hook
	h.mu.Unlock()
}

func (h *hookTeams) Update(ctx context.Context, name string, fn func(*team.Config) error) (team.Config, error) {
	h.mu.Lock()
	h.n++
	n, hook := h.n, h.hook
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.done++
		h.mu.Unlock()
	}()
	if hook != nil {
		if err := hook(ctx, n); err != nil {
			return team.Config{}, err
		}
	}
	return h.Store.Update(ctx, name, fn)
}

// gateModel reports each request (newest user text) on called, then
// waits for a token on release when hold says so.
type gateModel struct {
	llm.Model
	called  chan string
	release chan struct{}
	hold    func(text string) bool
}

func (m *gateModel) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	text := ""
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == llm.RoleUser {
			text = req.Messages[i].Text()
			break
		}
	}
	m.called <- text
	if m.hold(text) {
		select {
		case <-m.release:
		case <-ctx.Done():
		}
	}
	return m.Model.Stream(ctx, req)
}

// startGated starts ann (startWakeTeammateWith, no ActiveDelay) with its
// team store behind ht and its model behind gm, its Trust holding a
// message that holds text until gate is closed (entered, when not nil, is
// closed as it starts holding).
func startGated(t *testing.T, ht *hookTeams, gm *gateModel, text string, entered, gate chan struct{}) (*mem.Store, chan struct{}) {
	_, st, _, idle := startWakeTeammateWith(t, nil, func(c *TeammateConfig) {
		c.ActiveDelay = -1
		ht.Store = c.Teams
		c.Teams = ht
		c.Trust = func(m mailbox.Message) bool {
			if strings.Contains(m.Text, text) {
				if entered != nil {
					close(entered)
				}
				<-gate
			}
			return true
		}
		build := c.Build
		c.Build = func(tm *Teammate) (agent.Config, error) {
			ac, err := build(tm)
			gm.Model = ac.Model
			ac.Model = gm
			return ac, err
		}
	})
	return st, idle
}

func goroutineWaiting(fn string) bool {
	buf := make([]byte, 1<<20)
	return strings.Contains(string(buf[:runtime.Stack(buf, true)]), fn)
}

func annActive(t *testing.T, c team.Config) bool {
	m, ok := c.Member("ann")
	return ok && m.Active()
}

// TestStaleFlagRetryGivesWay: a retry timer of a failed idle write fires
// while a wake's pump holds actMu and is about to write active; that write
// fails too and sets a retry of its own. The stale retry, run once the
// pump lets go, must give way: it used to cancel the new retry and write
// idle, so the team said idle while the teammate worked on mail already
// marked read.
func TestStaleFlagRetryGivesWay(t *testing.T) {
	ht := &hookTeams{}
	gm := &gateModel{called: make(chan string, 16), release: make(chan struct{}, 16),
		hold: func(s string) bool { return strings.Contains(s, "second") }}
	trustGate := make(chan struct{})
	st, idle := startGated(t, ht, gm, "second", nil, trustGate)
	<-gm.called // the first prompt's call
	goIdleHeld := make(chan struct{})
	releaseGoIdle := make(chan struct{})
	modelOnSecond := make(chan struct{})
	ht.arm(func(ctx context.Context, n int) error {
		switch n {
		case 1: // the first wake's active write: ok
		case 2: // its idle write (goIdle): held, then fails -> retry(idle) in 100 ms
			close(goIdleHeld)
			<-releaseGoIdle
			return errFlaky
		case 3: // the second wake's active write (pump): fails once the run is under way
			<-modelOnSecond
			return errFlaky
		}
		return nil
	})
	mailAnn(t, st, "first")
	waitSignal(t, gm.called, "model called with first")
	waitSignal(t, idle, "idle after first")
	waitSignal(t, goIdleHeld, "goIdle's write")
	mailAnn(t, st, "second")
	close(releaseGoIdle)
	// The retry of the idle write fires (100 ms) while the pump holds actMu.
	waitUntil(t, "the idle retry blocked on actMu", func() bool { return goroutineWaiting("(*Teammate).retryFlag") })
	close(trustGate)
	if got := waitSignal(t, gm.called, "model called with second"); !strings.Contains(got, "second") {
		t.Fatalf("model called with %q", got)
	}
	close(modelOnSecond)
	// The model is working on "second" (held).
	waitUntil(t, "the stale retry's write, ended", func() bool {
		ht.mu.Lock()
		defer ht.mu.Unlock()
		return ht.done >= 4
	})
	c, err := st.Teams().Get(t.Context(), "crew")
	if err != nil {
		t.Fatal(err)
	}
	if !annActive(t, c) && annUnread(t, st) == 0 {
		t.Errorf("ann works on %q but the team says idle and its inbox is all read (a lead would find the team quiet)", "second")
	}
	gm.release <- struct{}{}
	waitSignal(t, idle, "idle after second")
}

// TestMailReadAsTheRunEnds: mail the pump read while the run still went,
// and dispatched after the run ended and the teammate went idle, is not
// marked read before the teammate is shown active: work is always
// visible, unread or active. (The pump looked at whether the run went
// before taking actMu, so it neither flipped the flag nor kept the mail
// unread.)
func TestMailReadAsTheRunEnds(t *testing.T) {
	ht := &hookTeams{}
	gm := &gateModel{called: make(chan string, 16), release: make(chan struct{}, 16),
		hold: func(s string) bool { return strings.Contains(s, "work") }}
	trustIn, trustGate := make(chan struct{}), make(chan struct{})
	st, idle := startGated(t, ht, gm, "late", trustIn, trustGate)
	<-gm.called
	mailAnn(t, st, "work")
	waitSignal(t, gm.called, "model called with work (held)")
	mailAnn(t, st, "late") // read by the running teammate's pump; held in Trust
	waitSignal(t, trustIn, "the pump dispatching late")
	// The next active write after an idle one is held, as on a loaded
	// team file: the window in which read mail and an idle flag met.
	var idleWritten atomic.Bool
	ht.arm(func(ctx context.Context, n int) error {
		if idleWritten.Load() {
			<-ctx.Done()
			return ctx.Err()
		}
		if c, err := ht.Store.Get(ctx, "crew"); err == nil && annActive(t, c) {
			idleWritten.Store(true) // this write sets ann idle; the next one waits
		}
		return nil
	})
	gm.release <- struct{}{}
	// Until the teammate's model has "late", it is never shown idle with
	// nothing unread.
	visible := func(when string) {
		t.Helper()
		c, err := st.Teams().Get(t.Context(), "crew")
		if err != nil {
			t.Fatal(err)
		}
		if !annActive(t, c) && annUnread(t, st) == 0 {
			t.Fatalf("%s: %q is marked read and ann is idle in the team, but its model does not have it", when, "late")
		}
	}
	waitSignal(t, idle, "the run's end (its idle notification)")
	visible("while the pump holds late")
	close(trustGate)
	for {
		select {
		case got := <-gm.called:
			if !strings.Contains(got, "late") {
				t.Fatalf("model called with %q; want late", got)
			}
			return
		case <-time.After(2 * time.Millisecond):
			visible("once the pump let late go")
		case <-t.Context().Done():
			return
		}
	}
}

// errModel fails every request whose newest user text contains "boom".
type errModel struct{ llm.Model }

var errBoom = errors.New("boom: budget spent")

func (m errModel) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == llm.RoleUser {
			if strings.Contains(req.Messages[i].Text(), "boom") {
				return func(yield func(llm.Event, error) bool) { yield(llm.Event{}, errBoom) }
			}
			break
		}
	}
	return m.Model.Stream(ctx, req)
}

// TestSpentTeammateStaysIdle: a teammate waiting for its shutdown
// request after the session's budget is spent (awaitShutdown) never runs
// again, so mail that reaches it must not show it working: it used to be
// marked active by any message, for good.
func TestSpentTeammateStaysIdle(t *testing.T) {
	_, st, _, idle := startWakeTeammateWith(t, nil, func(c *TeammateConfig) {
		c.ActiveDelay = -1 // a flip is written before the mail is marked read
		c.Spent = func(err error) bool { return errors.Is(err, errBoom) }
		build := c.Build
		c.Build = func(tm *Teammate) (agent.Config, error) {
			ac, err := build(tm)
			ac.Model = errModel{ac.Model}
			return ac, err
		}
	})
	mailAnn(t, st, "boom")
	waitSignal(t, idle, "idle (failed) after boom")
	waitAnnActive(t, st, false, "ann idle in the team")
	if _, err := st.Mail().Send(t.Context(), "crew", "ann", mailbox.Message{From: "bob", Text: "hi"}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the peer's message read", func() bool { return annUnread(t, st) == 0 })
	c, err := st.Teams().Get(t.Context(), "crew")
	if err != nil {
		t.Fatal(err)
	}
	if annActive(t, c) {
		t.Error("ann (spent, waiting for its shutdown) is shown working after a peer's message")
	}
}
