package swarm

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/backend"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/team"
)

// A lead of session s-1 that comes back finds the team s-1 created: the
// in-process teammate that died with it is marked dead, the pane
// teammate still running is stopped and removed, what both left is
// reaped before their tasks are released, and the model is told.
func TestReattachFindsTheSessionsTeam(t *testing.T) {
	var mu sync.Mutex
	var order []string // reaps and releases, in order
	h := newHarness(t, `{"turns":[{"match":{},"reply":{"text":"ok"},"repeat":true}]}`, func(c *LeadConfig) {
		c.Reap = func(agentID string, _ int) {
			mu.Lock()
			order = append(order, "reap "+agentID)
			mu.Unlock()
		}
	})
	ctx := t.Context()
	teams, tasks := h.store.Teams(), h.store.Tasks()
	if _, err := team.Create(ctx, teams, team.CreateOptions{Name: "other", SessionID: "s-2", Now: time.Now(), Pick: func(int) int { return 0 }}); err != nil {
		t.Fatal(err)
	}
	cfg, err := team.Create(ctx, teams, team.CreateOptions{Name: "crew", SessionID: "s-1", Now: time.Now(), Pick: func(int) int { return 0 }})
	if err != nil {
		t.Fatal(err)
	}
	active := true
	for _, m := range []team.Member{{Name: "ada", BackendType: backend.InProcess, IsActive: &active}, {Name: "bob", BackendType: backend.Tmux, IsActive: &active}} {
		if _, err := team.AddMember(ctx, teams, cfg.Name, m, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	list := tasklist.New(tasks, cfg.Name)
	for _, who := range []string{"ada", "bob"} {
		tk, err := list.Create(ctx, tasklist.Draft{Subject: who + "'s job"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := list.ClaimTask(ctx, tk.ID, who); err != nil {
			t.Fatal(err)
		}
	}
	state := func(m team.Member) int {
		if m.Name == "bob" {
			return MateRunning
		}
		return MateGone
	}
	var stopped []string
	r, err := h.lead.Reattach(ctx, state, func(m team.Member) {
		stopped = append(stopped, m.Name)
		mu.Lock()
		order = append(order, "stop "+m.Name)
		mu.Unlock()
	})
	if err != nil {
		t.Fatalf("Reattach: %v", err)
	}
	if r.Team != "crew" || h.lead.Team() != "crew" {
		t.Fatalf("Reattach = %+v, Team() = %q; want crew", r, h.lead.Team())
	}
	if !slices.Equal(r.Dead, []string{"ada"}) || !slices.Equal(r.Stopped, []string{"bob"}) || len(r.Released) != 2 || !slices.Equal(stopped, []string{"bob"}) {
		t.Errorf("Reattach = %+v (stopped %v); want ada dead, bob stopped, 2 tasks released", r, stopped)
	}
	if want := []string{"stop bob", "reap bob@crew"}; !slices.Equal(order, want) {
		t.Errorf("stops and reaps = %v; want %v (an in-process teammate's groups were its lead's)", order, want)
	}
	got, err := teams.Get(ctx, "crew")
	if err != nil {
		t.Fatal(err)
	}
	ada, ok := got.Member("ada")
	if _, still := got.Member("bob"); !ok || still || ada.Active() || string(ada.Extra[StatusKey]) != `"dead"` {
		t.Errorf("team after Reattach: %+v; want ada marked dead, bob removed", got.Members)
	}
	for _, e := range mustList(t, list) {
		if e.Owner != "" || e.Status != tasklist.StatusPending {
			t.Errorf("task %s = %s owned by %q; want pending, unowned", e.ID, e.Status, e.Owner)
		}
	}
	h.mu.Lock()
	in := strings.Join(h.input, "\n")
	h.mu.Unlock()
	if !strings.Contains(in, `You are again the lead of team "crew"`) || !strings.Contains(in, "2 task(s) were unassigned") {
		t.Errorf("the lead's model was told %q", in)
	}
	// Led already: a second call does nothing; TeamCreate is refused.
	if r, err := h.lead.Reattach(ctx, state, nil); err != nil || r.Team != "" {
		t.Errorf("second Reattach = %+v, %v; want nothing", r, err)
	}
	if _, err := h.lead.CreateTeam(ctx, "second", "", ""); err == nil {
		t.Error("CreateTeam after Reattach made a second team")
	}
}

func mustList(t *testing.T, l *tasklist.List) []tasklist.Task {
	t.Helper()
	ts, err := l.Tasks(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return ts
}
