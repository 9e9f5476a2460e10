package swarm

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/llm/scripted"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/store/mem"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/team"
	"github.com/troupe-dev/troupe/tool"
)

// gatedTeams counts team updates and can hold them until released.
type gatedTeams struct {
	team.Store
	mu      sync.Mutex
	updates int           // guarded by mu
	hold    chan struct{} // guarded by mu; when set, updates wait for it to close
	failAt  map[int]bool  // guarded by mu; updates (by number, from 1) that fail
}

// errFlaky is the failure of an update in gatedTeams.failAt.
var errFlaky = errors.New("flaky store: update timed out")

func (g *gatedTeams) Update(ctx context.Context, name string, fn func(*team.Config) error) (team.Config, error) {
	g.mu.Lock()
	g.updates++
	hold, fail := g.hold, g.failAt[g.updates]
	g.mu.Unlock()
	if fail {
		return team.Config{}, errFlaky
	}
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return team.Config{}, ctx.Err()
		}
	}
	return g.Store.Update(ctx, name, fn)
}

func (g *gatedTeams) count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.updates
}

// askedModel signals each request to its model.
type askedModel struct {
	llm.Model
	asked chan string // the newest user message's text
}

func (m *askedModel) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == llm.RoleUser {
			m.asked <- req.Messages[i].Text()
			break
		}
	}
	return m.Model.Stream(ctx, req)
}

// startWakeTeammateWith runs teammate ann of team crew on a memory store
// whose team updates go through g, adjusted by adjust (and its tasks by
// tasks, when set), and returns once ann has finished its first turn and
// gone idle.
func startWakeTeammateWith(t *testing.T, tasks func(*mem.Store) tasklist.Store, adjust func(*TeammateConfig)) (g *gatedTeams, st *mem.Store, model *askedModel, idle chan struct{}) {
	t.Helper()
	st = mem.New(mem.Options{})
	t.Cleanup(func() { st.Close() })
	ctx := t.Context()
	if _, err := team.Create(ctx, st.Teams(), team.CreateOptions{Name: "crew", Now: time.Now(), Pick: func(int) int { return 0 }}); err != nil {
		t.Fatal(err)
	}
	if _, err := team.AddMember(ctx, st.Teams(), "crew", team.Member{Name: "ann"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	script, err := scripted.Parse([]byte(`{"turns":[{"match":{},"reply":{"text":"ok"},"repeat":true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	g = &gatedTeams{Store: st.Teams()}
	model = &askedModel{Model: scripted.New(script), asked: make(chan string, 16)}
	idle = make(chan struct{}, 16)
	var ts tasklist.Store = st.Tasks()
	if tasks != nil {
		ts = tasks(st)
	}
	cfg := TeammateConfig{Team: "crew", Name: "ann", Teams: g, Mail: st.Mail(), Tasks: ts, Prompt: "start", NoAutoClaim: true,
		OnEvent: func(e Event) {
			if e.Kind == EventIdle {
				idle <- struct{}{}
			}
		},
		Build: func(*Teammate) (agent.Config, error) {
			reg, _ := tool.NewRegistry()
			return agent.Config{Model: model, System: "teammate", Tools: reg}, nil
		}}
	adjust(&cfg)
	tm, err := NewTeammate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tm.Run(runCtx) }()
	t.Cleanup(func() {
		cancel()
		g.mu.Lock()
		if g.hold != nil {
			select {
			case <-g.hold:
			default:
				close(g.hold)
			}
		}
		g.mu.Unlock()
		<-done
	})
	waitSignal(t, model.asked, "the first prompt")
	waitSignal(t, idle, "idle after the first turn")
	waitAnnActive(t, st, false, "ann marked idle in the team")
	return g, st, model, idle
}

func waitSignal[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("no %s within 10 s", what)
	}
	var zero T
	return zero
}

// TestWakeFlipsActiveOnce: a teammate woken by a message updates the team
// once to go active and once to go idle after its turn: the pump's flip
// is not repeated when the run starts (it was three updates a wake).
func TestWakeFlipsActiveOnce(t *testing.T) {
	g, st, model, idle := startWakeTeammateWith(t, nil, func(c *TeammateConfig) { c.ActiveDelay = -1 })
	for i := range 3 {
		before := g.count()
		mailAnn(t, st, "hello")
		waitSignal(t, model.asked, "the model asked with the message")
		waitSignal(t, idle, "idle after the message's turn")
		waitAnnActive(t, st, false, "ann marked idle in the team")
		time.Sleep(20 * time.Millisecond) // room for a stray update to show
		if got := g.count() - before; got != 2 {
			t.Errorf("wake %d: %d team updates; want 2 (active on the wake, idle after the turn)", i, got)
		}
	}
}

func waitUntil(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("not %s within 10 s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestWakeDoesNotWaitForTeamWrite: the model is asked with a message while
// the teammate's write of its active flag still waits (for the team's
// lock, behind other teammates); the message is marked read only after
// that write.
func TestWakeDoesNotWaitForTeamWrite(t *testing.T) {
	g, st, model, idle := startWakeTeammateWith(t, nil, func(c *TeammateConfig) { c.ActiveDelay = -1 })
	hold := make(chan struct{})
	g.mu.Lock()
	g.hold = hold
	g.mu.Unlock()
	mailAnn(t, st, "urgent")
	waitSignal(t, model.asked, "the model asked while the team write is held")
	if unread := annUnread(t, st); unread != 1 {
		t.Errorf("while the active flag is not yet written: %d unread messages; want 1 (read only once the teammate shows active)", unread)
	}
	close(hold)
	waitSignal(t, idle, "idle after the turn")
	waitUntil(t, "the message marked read", func() bool {
		return annUnread(t, st) == 0
	})
}

// losingTasks makes every claim by ann lose to zed, a faster teammate:
// the task is stored as zed's, and ann's write conflicts.
type losingTasks struct{ *mem.Tasks }

func (l losingTasks) Put(ctx context.Context, list string, t tasklist.Task, prev tasklist.Revision) (tasklist.Revision, error) {
	if t.Status == tasklist.StatusInProgress && t.Owner == "ann" {
		t.Owner = "zed"
		if _, err := l.Tasks.Put(ctx, list, t, prev); err != nil {
			return 0, err
		}
		return 0, tasklist.ErrConflict
	}
	return l.Tasks.Put(ctx, list, t, prev)
}

// TestLostClaimsStayActive: a teammate that keeps losing the race for
// ready tasks (a drain with many teammates) marks itself active once and
// idle once when the linger passes, instead of writing the team twice on
// every task change.
func TestLostClaimsStayActive(t *testing.T) {
	g, st, _, _ := startWakeTeammateWith(t, func(st *mem.Store) tasklist.Store { return losingTasks{st.Tasks()} },
		func(c *TeammateConfig) { c.NoAutoClaim, c.ClaimLinger = false, 300*time.Millisecond })
	before := g.count()
	l := tasklist.New(st.Tasks(), "crew")
	for i := range 5 {
		if _, err := l.Create(t.Context(), tasklist.Draft{Subject: fmt.Sprintf("task %d", i), Description: "d"}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := g.count() - before; got != 1 {
		t.Errorf("%d team updates while losing claims on 5 task changes; want 1 (active once)", got)
	}
	waitAnnActive(t, st, false, "ann idle after the linger")
	if got := g.count() - before; got != 2 {
		t.Errorf("%d team updates in all; want 2 (active once, idle once)", got)
	}
}

// heldModel holds each request until release gets a value.
type heldModel struct {
	llm.Model
	release chan struct{}
}

func (m *heldModel) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	select {
	case <-m.release:
	case <-ctx.Done():
	}
	return m.Model.Stream(ctx, req)
}

// TestShortWakeWritesNoFlag: a teammate woken by a message whose run ends
// within ActiveDelay writes nothing to the team file (in a team of a
// thousand, each write is a 300 KB rewrite every host reads again), and
// its message is marked read once its idle notification is out.
func TestShortWakeWritesNoFlag(t *testing.T) {
	g, st, model, idle := startWakeTeammateWith(t, nil, func(c *TeammateConfig) { c.ActiveDelay = time.Minute })
	for i := range 3 {
		before := g.count()
		mailAnn(t, st, "hello")
		waitSignal(t, model.asked, "the model asked with the message")
		waitSignal(t, idle, "idle after the message's turn")
		waitUntil(t, "the message marked read", func() bool {
			return annUnread(t, st) == 0
		})
		notes, err := st.Mail().Read(t.Context(), "crew", team.LeadName, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(notes) != i+2 { // the first turn's, and one per wake
			t.Errorf("wake %d: the lead has %d idle notifications; want %d", i, len(notes), i+2)
		}
		if got := g.count() - before; got != 0 {
			t.Errorf("wake %d: %d team updates; want 0 (the run ended within ActiveDelay)", i, got)
		}
	}
}

// TestLongWakeWritesActiveBeforeRead: a teammate still working
// ActiveDelay after a wake writes its active flag, and only then marks
// its message read: while the write waits (held here), the message stays
// unread. At the end of the run it goes idle in the team again.
func TestLongWakeWritesActiveBeforeRead(t *testing.T) {
	held := &heldModel{release: make(chan struct{}, 16)}
	held.release <- struct{}{} // the first prompt runs at once
	g, st, model, idle := startWakeTeammateWith(t, nil, func(c *TeammateConfig) {
		c.ActiveDelay = 20 * time.Millisecond
		build := c.Build
		c.Build = func(tm *Teammate) (agent.Config, error) {
			ac, err := build(tm)
			held.Model = ac.Model
			ac.Model = held
			return ac, err
		}
	})
	hold := make(chan struct{})
	g.mu.Lock()
	g.hold = hold
	before := g.updates
	g.mu.Unlock()
	mailAnn(t, st, "long job")
	waitUntil(t, "the active flag's write begun after ActiveDelay", func() bool { return g.count() > before })
	select {
	case <-model.asked:
		t.Fatal("the model answered while held")
	default:
	}
	if unread := annUnread(t, st); unread != 1 {
		t.Errorf("while the active flag is being written: %d unread messages; want 1", unread)
	}
	close(hold)
	waitAnnActive(t, st, true, "ann marked active in the team")
	waitUntil(t, "the message marked read", func() bool {
		return annUnread(t, st) == 0
	})
	held.release <- struct{}{}
	waitSignal(t, model.asked, "the model asked with the message")
	waitSignal(t, idle, "idle after the turn")
	waitAnnActive(t, st, false, "ann marked idle in the team")
	if got := g.count() - before; got != 2 {
		t.Errorf("%d team updates; want 2 (active after ActiveDelay, idle after the turn)", got)
	}
}

// TestShutdownWakeMarksRead: a shutdown request that wakes an idle
// teammate and is approved within ActiveDelay (here by the runtime, the
// budget being spent) is marked read as the teammate ends: its flag was
// never written, and nothing else would mark it.
func TestShutdownWakeMarksRead(t *testing.T) {
	_, st, _, _ := startWakeTeammateWith(t, nil, func(c *TeammateConfig) { c.ActiveDelay = time.Minute })
	text, err := mailbox.Encode(mailbox.ShutdownRequest{RequestID: "shutdown-1@ann", From: team.LeadName, BudgetSpent: true,
		Timestamp: time.Now().UTC().Format(mailbox.TimeLayout)})
	if err != nil {
		t.Fatal(err)
	}
	mailAnn(t, st, text)
	waitUntil(t, "the approval in the lead's inbox", func() bool {
		msgs, err := st.Mail().Read(t.Context(), "crew", team.LeadName, false)
		if err != nil {
			return false
		}
		for _, m := range msgs {
			if mailbox.ProtocolKind(m.Text) == mailbox.KindShutdownApproved {
				return true
			}
		}
		return false
	})
	waitUntil(t, "the shutdown request marked read", func() bool {
		return annUnread(t, st) == 0
	})
}

// heldMarks holds the read marks of one inbox until release is closed.
type heldMarks struct {
	mailbox.Store
	agent   string
	release chan struct{}
	held    atomic.Int32
}

func (h *heldMarks) MarkRead(ctx context.Context, teamName, agent string, ids []string) (int, error) {
	if agent == h.agent {
		h.held.Add(1)
		select {
		case <-h.release:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	return h.Store.MarkRead(ctx, teamName, agent, ids)
}

// TestLeadSeesShortWakeEnd: a teammate whose wake ends within ActiveDelay
// sends its idle notification and then marks its mail read, writing
// nothing to the team file. A lead that looked in between (not quiet: the
// mail is unread) is woken by that mark and finds the team quiet, instead
// of waiting for its next look (30 s).
func TestLeadSeesShortWakeEnd(t *testing.T) {
	h := newHarness(t, script(`{"reply":{"text":"ok"},"repeat":true}`), nil)
	held := &heldMarks{Store: h.store.Mail(), agent: "ann", release: make(chan struct{})}
	h.mateCfg = func(c *TeammateConfig) { c.Mail, c.ActiveDelay = held, time.Minute }
	tn := h.create("crew").Name
	h.spawn("ann", "start")
	h.waitFor("ann idle after its first turn", func() bool { return h.countEvents("ann", EventIdle) >= 1 && h.isQuiet() })
	h.send(tn, team.LeadName, "ann", mailbox.Text("hello"))
	h.waitFor("ann's idle notification read by the lead and ann's mark held", func() bool {
		if held.held.Load() == 0 {
			return false
		}
		unread, err := h.store.Mail().Read(context.Background(), tn, team.LeadName, true)
		h.lead.mu.Lock()
		busy := h.lead.ending > 0
		h.lead.mu.Unlock()
		return err == nil && len(unread) == 0 && !busy
	})
	if h.isQuiet() {
		t.Fatal("quiet while ann's mail is unread")
	}
	h.lead.mu.Lock()
	watched := h.lead.unreadWatch["ann"]
	h.lead.mu.Unlock()
	if !watched { // nothing else would wake a lead that waits on this mark
		t.Error("the lead found ann idle with unread mail and does not watch its inbox")
	}
	for len(h.lead.Changed()) > 0 {
		<-h.lead.Changed()
	}
	close(held.release)
	deadline := time.After(10 * time.Second)
	for !h.isQuiet() {
		select {
		case <-h.lead.Changed():
		case <-deadline:
			t.Fatal("the lead was not woken to find the team quiet after ann marked its mail read")
		}
	}
}

// TestIdleFlagRetried: a teammate whose idle flag write fails (a timeout
// on a loaded store) writes it again until it lands, instead of being
// shown working until its next wake, which a lead waiting for its team to
// settle would wait for.
func TestIdleFlagRetried(t *testing.T) {
	g, st, model, idle := startWakeTeammateWith(t, nil, func(c *TeammateConfig) { c.ActiveDelay = -1 })
	g.mu.Lock()
	n := g.updates
	g.failAt = map[int]bool{n + 2: true, n + 3: true} // the wake's idle write, and its first retry
	g.mu.Unlock()
	mailAnn(t, st, "hello")
	waitSignal(t, model.asked, "the model asked with the message")
	waitSignal(t, idle, "idle after the message's turn")
	waitUntil(t, "the idle write to fail", func() bool { return g.count() >= n+2 })
	waitAnnActive(t, st, false, "ann idle in the team file")
	if got := g.count() - n; got != 4 {
		t.Errorf("%d team updates since the wake; want 4 (active, idle failed, retry failed, retry)", got)
	}
}

// waitAnnActive waits until the team file marks ann active, or idle.
func waitAnnActive(t *testing.T, st *mem.Store, active bool, what string) {
	t.Helper()
	waitUntil(t, what, func() bool {
		c, err := st.Teams().Get(t.Context(), "crew")
		if err != nil {
			return false
		}
		m, ok := c.Member("ann")
		return ok && m.Active() == active
	})
}

// heldListTasks holds every List of the task list while hold is set: a
// task list that answers slowly (on a cluster, each read asks the stream's
// leader).
type heldListTasks struct {
	tasklist.Store
	mu    sync.Mutex
	hold  chan struct{} // guarded by mu
	lists atomic.Int64  // List calls begun
}

func (h *heldListTasks) Watch(ctx context.Context, list string) (<-chan struct{}, error) {
	return h.Store.(tasklist.Watcher).Watch(ctx, list)
}

func (h *heldListTasks) List(ctx context.Context, list string) ([]tasklist.Entry, error) {
	h.lists.Add(1)
	h.mu.Lock()
	hold := h.hold
	h.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
	return h.Store.List(ctx, list)
}

// TestWakeDoesNotLookAtTaskList: a teammate that claims tasks on its own,
// woken while idle by a message, asks its model with the message without
// reading the task list first: the message does not change the list, and
// that read (a request to the stream's leader on a NATS cluster) held up
// every wake of a thousand teammates by tens of milliseconds. (After the
// turn it looks at the list, as it must: a held list then holds it.)
func TestWakeDoesNotLookAtTaskList(t *testing.T) {
	ht := &heldListTasks{}
	_, st, model, _ := startWakeTeammateWith(t, func(st *mem.Store) tasklist.Store { ht.Store = st.Tasks(); return ht },
		func(c *TeammateConfig) { c.NoAutoClaim = false })
	// The reads after the first turn (its idle notification's, then its
	// look for a task) are not held.
	waitUntil(t, "a look at the task list after the first turn", func() bool { return ht.lists.Load() >= 2 })
	hold := make(chan struct{})
	ht.mu.Lock()
	ht.hold = hold
	ht.mu.Unlock()
	t.Cleanup(func() { close(hold) }) // before the teammate's run ends
	mailAnn(t, st, "hello")
	if got := waitSignal(t, model.asked, "the model asked with the message while the task list does not answer"); !strings.Contains(got, "hello") {
		t.Errorf("model asked with %q; want the message", got)
	}
}

// annUnread returns how many messages in ann's inbox are unread.
func annUnread(t *testing.T, st *mem.Store) int {
	t.Helper()
	unread, err := st.Mail().Read(t.Context(), "crew", "ann", true)
	if err != nil {
		t.Fatal(err)
	}
	return len(unread)
}

// mailAnn sends text from the lead to ann.
func mailAnn(t *testing.T, st *mem.Store, text string) {
	t.Helper()
	if _, err := st.Mail().Send(t.Context(), "crew", "ann", mailbox.Message{From: team.LeadName, Text: text}); err != nil {
		t.Fatal(err)
	}
}
