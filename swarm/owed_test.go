package swarm

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/backend"
	"github.com/troupe-dev/troupe/backend/inprocess"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/team"
)

// paneLike is the in-process backend under a pane backend's name, so that
// the lead treats its teammates as pane teammates (the first prompt by
// mail, QueuingPanes) while the test plays the teammate's part by hand.
type paneLike struct{ backend.Backend }

func (paneLike) Name() string { return backend.Tmux }

// queuingHarness is a lead whose one teammate, helper, behaves as the
// test makes it: it takes mail, writes idle notifications and answers
// shutdown requests only when told, as a Claude Code teammate would.
func queuingHarness(t *testing.T, opt func(*LeadConfig)) (*harness, string) {
	h := newHarness(t, script(`{"reply":{"text":"unused"},"repeat":true}`), func(c *LeadConfig) {
		c.Backend = paneLike{inprocess.New()}
		c.QueuingPanes, c.NoAutoClaim = true, true
		c.Launch = func(ctx context.Context, l *Lead, m team.Member, r SpawnRequest, be string) (backend.Spec, error) {
			return backend.Spec{Run: func(ctx context.Context) error { <-ctx.Done(); return nil }}, nil
		}
		if opt != nil {
			opt(c)
		}
	})
	cfg := h.create("q")
	h.spawn("helper", "do the work")
	// Claude Code's teammates do not keep isActive up to date.
	if err := team.SetActive(context.Background(), h.store.Teams(), cfg.Name, "helper", false); err != nil {
		t.Fatal(err)
	}
	return h, cfg.Name
}

// take marks everything unread in name's inbox read, as a teammate taking
// its mail does, and returns the texts.
func (h *harness) take(teamName, name string) []string {
	h.t.Helper()
	ctx := context.Background()
	msgs, err := h.store.Mail().Read(ctx, teamName, name, true)
	if err != nil {
		h.t.Fatal(err)
	}
	var ids, texts []string
	for _, m := range msgs {
		ids, texts = append(ids, m.ID), append(texts, m.Text)
	}
	if _, err := h.store.Mail().MarkRead(ctx, teamName, name, ids); err != nil {
		h.t.Fatal(err)
	}
	return texts
}

func (h *harness) isQuiet() bool {
	h.t.Helper()
	q, err := h.lead.Quiet(context.Background())
	if err != nil {
		h.t.Fatal(err)
	}
	return q
}

// idleFrom sends name's n-th idle notification and waits until the lead
// has read it.
func (h *harness) idleFrom(teamName, name string, n int) {
	h.t.Helper()
	h.send(teamName, name, team.LeadName, mailbox.IdleNotification{From: name, IdleReason: mailbox.IdleAvailable, Timestamp: stamp()})
	h.waitFor("idle notification read", func() bool { return h.countEvents(name, EventIdle) >= n })
}

func (h *harness) countEvents(agent, kind string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, e := range h.events {
		if e.Agent == agent && e.Kind == kind {
			n++
		}
	}
	return n
}

// The race of issue 23, step by step: the teammate goes idle, starts a
// turn of its own (its task assignment), takes the lead's shutdown
// request in the middle of that turn and goes idle once more before it
// answers. The lead must not be quiet until the answer; and a message
// taken mid-turn is handled only by the turn after.
func TestLeadWaitsForQueuedMail(t *testing.T) {
	h, tn := queuingHarness(t, nil)
	ctx := context.Background()
	if h.isQuiet() {
		t.Fatal("quiet with the spawn prompt unread")
	}
	if got := h.take(tn, "helper"); len(got) != 1 || got[0] != "do the work" {
		t.Fatalf("helper's inbox held %q, want the spawn prompt", got)
	}
	h.waitFor("the prompt seen taken", func() bool { return len(h.lead.owing()) == 1 })
	if h.isQuiet() {
		t.Fatal("quiet while helper works on its prompt (taken, isActive false, no idle notification yet)")
	}
	h.idleFrom(tn, "helper", 1)
	h.waitFor("quiet after the first idle notification", h.isQuiet)

	// Its own task assignment starts a second turn.
	h.send(tn, "helper", "helper", mailbox.Text("task #1 is yours"))
	if h.isQuiet() {
		t.Fatal("quiet with mail unread in helper's inbox")
	}
	h.take(tn, "helper")
	// The lead asks it to shut down, and says something else; helper
	// takes both during that second turn.
	req := mailbox.ShutdownRequest{RequestID: "shutdown-1@helper", From: team.LeadName, Reason: "done", Timestamp: stamp()}
	text, err := mailbox.Encode(req)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{text, "also: thanks"} {
		if _, err := h.lead.Mail().Send(ctx, tn, "helper", mailbox.Message{From: team.LeadName, Text: s}); err != nil {
			t.Fatal(err)
		}
	}
	h.take(tn, "helper")
	h.idleFrom(tn, "helper", 2) // the end of the second turn
	if h.isQuiet() {
		t.Fatalf("quiet after the second turn's idle notification, with the shutdown request unanswered: %q", h.lead.owing())
	}
	h.send(tn, "helper", team.LeadName, mailbox.ShutdownRejected{RequestID: req.RequestID, From: "helper", Reason: "one more thing", Timestamp: stamp()})
	h.waitFor("the rejection read", func() bool { return h.hasEvent("helper", EventShutdown, "rejected shutdown") })
	if owed := h.lead.owing(); len(owed) != 1 || !strings.Contains(owed[0], "2 message(s)") {
		t.Fatalf("owing after the rejection = %q, want helper's two messages of the lead, not handled before the third turn ends", owed)
	}
	h.idleFrom(tn, "helper", 3) // the turn that handled them
	h.waitFor("quiet after the third turn", h.isQuiet)
	if ps := h.lead.Problems(); len(ps) != 0 {
		t.Errorf("Problems = %q, want none", ps)
	}
}

// A teammate that never answers a shutdown request is killed and removed
// after ShutdownAnswerTimeout, its tasks released, the lead told, and the
// run's Problems say so.
func TestShutdownUnanswered(t *testing.T) {
	h, tn := queuingHarness(t, func(c *LeadConfig) { c.ShutdownAnswerTimeout = 300 * time.Millisecond })
	h.take(tn, "helper")
	h.idleFrom(tn, "helper", 1)
	req, _ := mailbox.Encode(mailbox.ShutdownRequest{RequestID: "shutdown-2@helper", From: team.LeadName, Timestamp: stamp()})
	if _, err := h.lead.Mail().Send(context.Background(), tn, "helper", mailbox.Message{From: team.LeadName, Text: req}); err != nil {
		t.Fatal(err)
	}
	if h.isQuiet() {
		t.Fatal("quiet right after the shutdown request")
	}
	h.waitFor("helper removed", func() bool { _, ok := h.member(tn, "helper"); return !ok })
	h.waitFor("quiet", h.isQuiet)
	if !strings.Contains(h.inputs(), "did not answer your shutdown request") {
		t.Errorf("the lead's model was not told:\n%s", h.inputs())
	}
	ps := h.lead.Problems()
	if len(ps) != 1 || !strings.Contains(ps[0], "helper did not answer the shutdown request") {
		t.Errorf("Problems = %q", ps)
	}
	if h.lead.Running() != 0 {
		t.Errorf("%d teammates still run", h.lead.Running())
	}
}

// A failed TeamDelete is a problem while the team is there.
func TestProblemsFailedDelete(t *testing.T) {
	h, _ := queuingHarness(t, nil)
	if err := team.SetActive(context.Background(), h.store.Teams(), "q", "helper", true); err != nil {
		t.Fatal(err)
	}
	_, err := h.lead.DeleteTeam(context.Background())
	var ae *team.ActiveError
	if !errors.As(err, &ae) {
		t.Fatalf("DeleteTeam with an active teammate = %v, want an ActiveError", err)
	}
	if ps := h.lead.Problems(); len(ps) != 1 || !strings.Contains(ps[0], `team "q" could not be deleted`) {
		t.Errorf("Problems = %q", ps)
	}
	if err := team.SetActive(context.Background(), h.store.Teams(), "q", "helper", false); err != nil {
		t.Fatal(err)
	}
	if _, err := h.lead.DeleteTeam(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ps := h.lead.Problems(); len(ps) != 0 {
		t.Errorf("Problems after a successful delete = %q", ps)
	}
}

func stamp() string { return time.Now().UTC().Format("2006-01-02T15:04:05.000Z") }

// TeamCreate resets a task list left over from an earlier team of the
// same name, and says so on the timeline.
func TestCreateTeamResetsLeftoverTasks(t *testing.T) {
	h := newHarness(t, script(`{"reply":{"text":"unused"},"repeat":true}`), nil)
	old := tasklist.New(h.store.Tasks(), "reborn")
	for _, s := range []string{"stale one", "stale two"} {
		if _, err := old.Create(context.Background(), tasklist.Draft{Subject: s, Description: s}); err != nil {
			t.Fatal(err)
		}
	}
	h.create("reborn")
	tasks, err := old.Tasks(context.Background())
	if err != nil || len(tasks) != 0 {
		t.Fatalf("tasks after TeamCreate: %v, %v; want none", tasks, err)
	}
	if !h.hasEvent(team.LeadName, EventWarning, "deleted 2 task(s) left over from an earlier team") {
		t.Error("the reset is not on the timeline")
	}
}

// Teammates are tasks: registered running with their identity, idle when
// their idle notification comes, stopped by id (TaskStop), which ends
// them as the lead intends: removed from the team, no death reported, the
// task killed without a notification for the model.
func TestTeammatesAreTasks(t *testing.T) {
	reg := task.New(task.Config{Dir: t.TempDir()})
	t.Cleanup(func() { reg.Close(context.Background()) })
	sub := reg.Subscribe()
	defer sub.Close()
	h, tn := queuingHarness(t, func(c *LeadConfig) { c.Registry = reg })
	var st task.State
	for _, s := range reg.List() {
		if s.Type == task.InProcessTeammate {
			st = s
		}
	}
	d, ok := st.Detail.(*task.Teammate)
	if !ok || st.Status != task.Running || !strings.HasPrefix(string(st.ID), "t") || d.AgentName != "helper" || d.TeamName != tn || d.Prompt != "do the work" {
		t.Fatalf("teammate task %+v (detail %+v)", st, st.Detail)
	}
	h.take(tn, "helper")
	h.idleFrom(tn, "helper", 1)
	if s, _ := reg.Get(st.ID); !s.Detail.(*task.Teammate).Idle {
		t.Error("the task does not say the teammate is idle")
	}
	h.lead.MateProgress("helper", task.Usage{TotalTokens: 1200, ToolUses: 3}, []string{Activity("Read", "a.go"), Activity("Bash", "go test ./...")})
	if s, _ := reg.Get(st.ID); s.Detail.(*task.Teammate).Usage.ToolUses != 3 || strings.Join(s.Detail.(*task.Teammate).Recent, "|") != "Reading a.go|Running go test ./..." {
		t.Errorf("progress in the task: %+v", s.Detail)
	}
	got, err := reg.Stop(context.Background(), st.ID)
	if err != nil || got.Status != task.Killed {
		t.Fatalf("Stop = %v, %v", got.Status, err)
	}
	h.waitFor("helper removed", func() bool { _, ok := h.member(tn, "helper"); return !ok })
	if h.hasEvent("helper", EventDead, "") {
		t.Error("a stopped teammate was reported dead")
	}
	if !h.hasEvent("helper", EventExit, "helper was stopped") {
		t.Error("the stop is not on the timeline")
	}
	for {
		e, ok := sub.TryNext()
		if !ok {
			break
		}
		if e.Kind == task.EventTerminated && e.State.ID == st.ID && e.Notification != "" {
			t.Errorf("the teammate's end carries a notification for the model: %q", e.Notification)
		}
	}
	h.waitFor("quiet", h.isQuiet)
}

// Tell: a person's message reaches the teammate's inbox from the lead, on
// the timeline; without a team it is an error.
func TestTell(t *testing.T) {
	h, tn := queuingHarness(t, nil)
	if err := h.lead.Tell(context.Background(), "helper", "please also update the docs\nthanks"); err != nil {
		t.Fatal(err)
	}
	got := h.take(tn, "helper")
	if len(got) != 2 || got[1] != "please also update the docs\nthanks" {
		t.Errorf("helper's inbox: %q", got)
	}
	if !h.hasEvent(team.LeadName, EventMessage, "user → helper: please also update the docs") {
		t.Error("not on the timeline")
	}
	l2, err := NewLead(LeadConfig{Teams: h.store.Teams(), Mail: h.store.Mail(), Tasks: h.store.Tasks(), Backend: inprocess.New(), Launch: h.launch})
	if err != nil {
		t.Fatal(err)
	}
	if err := l2.Tell(context.Background(), "helper", "hi"); err == nil {
		t.Error("Tell without a team")
	}
}
