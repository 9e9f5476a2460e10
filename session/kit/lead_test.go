package kit

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/backend/inprocess"
	"github.com/troupe-dev/troupe/llm/scripted"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/approve"
	"github.com/troupe-dev/troupe/permission/shell"
	"github.com/troupe-dev/troupe/store/file"
	"github.com/troupe-dev/troupe/store/mem"
	"github.com/troupe-dev/troupe/swarm"
	"github.com/troupe-dev/troupe/task"
)

// A lead's team built by the kit, end to end on the file store with real
// tools: an in-process teammate's Bash call asks the lead, whose answer
// is "allow always"; the rule is saved to the project's settings and the
// call runs; the teammate is a task in the lead's registry; its idle
// notification reaches the lead; the team tools are the lead's; the
// session's end shuts the teammate down and removes the team.
func TestLeadTeam(t *testing.T) {
	dir := t.TempDir()
	cwd := filepath.Join(dir, "work")
	if err := os.MkdirAll(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := scripted.Parse([]byte(`{"turns":[
 {"match":{"user":"say it"},"reply":{"tool_calls":[{"name":"Bash","input":{"command":"touch made-by-ann"}}]}},
 {"match":{"tool_result":"Bash"},"reply":{"text":"said it"}},
 {"match":{"user":"shutdown_request"},"reply":{"tool_calls":[
   {"name":"SendMessage","input":{"to":"team-lead","message":{"type":"shutdown_response","request_id":"{{capture:\"request_id\": \"(shutdown-[^\"]+)\"}}","approve":true}}}]},"repeat":true},
 {"match":{},"reply":{"text":"ok"},"repeat":true}
]}`))
	if err != nil {
		t.Fatal(err)
	}
	st, err := file.Open(filepath.Join(dir, "home"), file.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	reg := task.New(task.Config{Dir: filepath.Join(dir, "tasks"), PollInterval: -1})
	t.Cleanup(func() { reg.Close(context.Background()) })
	base := &approve.Approver{Policy: permission.Policy{Shell: shell.Parse}, Cwd: cwd, Mode: permission.ModeDefault}

	var mu sync.Mutex
	var asked []swarm.PermissionAsk
	var delivered []string
	lt, err := NewLeadTeam(LeadTeamConfig{
		Mates:   InProcess{Cwd: cwd, Model: scripted.New(s), Approver: base, Run: Run{Now: time.Now}},
		Stores:  Stores{Teams: st.Teams(), Mail: st.Mail(), Tasks: st.Tasks()},
		Backend: inprocess.New(), BackendReason: "asked for", Session: "s-kit", Approver: base, Registry: reg, Explicit: true,
		Answer: func(ctx context.Context, q swarm.PermissionAsk) (swarm.PermissionAnswer, error) {
			mu.Lock()
			asked = append(asked, q)
			mu.Unlock()
			return swarm.PermissionAnswer{Allow: true, Always: true, Rule: "Bash(touch made-by-ann)"}, nil
		},
		Deliver: func(text string) {
			mu.Lock()
			delivered = append(delivered, text)
			mu.Unlock()
		},
		OnEvent: func(e swarm.Event) { t.Logf("%s %-10s %s", e.Agent, e.Kind, e.Text) },
		Log:     slog.New(slog.NewTextHandler(t.Output(), nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = lt.Lead.Close(ctx)
	})

	var names []string
	for _, tl := range lt.Tools(nil, time.Now) {
		names = append(names, tl.Spec().Name)
	}
	for _, want := range []string{"TeamCreate", "TeamDelete", "SendMessage", "TaskCreate", "TaskGet", "TaskList", "TaskUpdate"} {
		if !slices.Contains(names, want) {
			t.Errorf("the lead's team tools %v lack %s", names, want)
		}
	}

	ctx := t.Context()
	cfg, err := lt.Lead.CreateTeam(ctx, "kitted", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lt.Lead.Spawn(ctx, swarm.SpawnRequest{Name: "ann", Prompt: "say it"}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "ann's idle notification with her report", func() bool {
		if d := lt.Lead.TakeDigest(); d != "" {
			mu.Lock()
			delivered = append(delivered, d)
			mu.Unlock()
		}
		mu.Lock()
		defer mu.Unlock()
		return strings.Contains(strings.Join(delivered, "\n"), "said it")
	})
	mu.Lock()
	if len(asked) != 1 || asked[0].Worker != "ann" || asked[0].Tool != "Bash" {
		t.Errorf("questions the lead answered: %+v; want ann's one Bash call", asked)
	}
	mu.Unlock()
	saved, err := os.ReadFile(filepath.Join(cwd, ".troupe", "settings.local.json"))
	if err != nil || !strings.Contains(string(saved), "Bash(touch made-by-ann)") {
		t.Errorf("the project's settings after allow always: %q, %v; want the rule", saved, err)
	}
	if _, err := os.Stat(filepath.Join(cwd, "made-by-ann")); err != nil {
		t.Errorf("ann's allowed call did not run: %v", err)
	}
	var mate task.State
	for _, s := range reg.List() {
		if s.Type == task.InProcessTeammate {
			mate = s
		}
	}
	if mate.ID == "" || !strings.Contains(mate.Description, "ann") {
		t.Fatalf("tasks %+v: want ann as an in_process_teammate task", reg.List())
	}

	ended, err := lt.Lead.EndSession(ctx)
	if err != nil {
		t.Fatalf("EndSession: %v (ended %v)", err, ended)
	}
	if _, err := st.Teams().Get(ctx, cfg.Name); err == nil {
		t.Errorf("team %s is still there after the session's end", cfg.Name)
	}
	waitUntil(t, "ann's task to end", func() bool {
		s, ok := reg.Get(mate.ID)
		return ok && s.Status.Terminal()
	})
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A lead team without what it cannot work without is an error naming
// the part, not a panic at its first spawn.
func TestLeadTeamIncomplete(t *testing.T) {
	base := &approve.Approver{Policy: permission.Policy{Shell: shell.Parse}, Cwd: t.TempDir()}
	st := mem.New(mem.Options{})
	defer st.Close()
	stores := Stores{Teams: st.Teams(), Mail: st.Mail(), Tasks: st.Tasks()}
	for _, c := range []struct {
		cfg  LeadTeamConfig
		want string
	}{
		{LeadTeamConfig{Stores: stores, Approver: base}, "no teammate backend"},
		{LeadTeamConfig{Stores: stores, Backend: inprocess.New()}, "no approver"},
		{LeadTeamConfig{Stores: Stores{Teams: st.Teams()}, Backend: inprocess.New(), Approver: base}, "stores are all needed"},
	} {
		if _, err := NewLeadTeam(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewLeadTeam = %v; want an error saying %q", err, c.want)
		}
	}
}
