package kit

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/backend/inprocess"
	"github.com/troupe-dev/troupe/llm/scripted"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/approve"
	"github.com/troupe-dev/troupe/permission/shell"
	"github.com/troupe-dev/troupe/store/file"
	"github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/tool"
	"github.com/troupe-dev/troupe/tool/agenttool"
)

func TestSessionTeam(t *testing.T) {
	for in, want := range map[string]string{
		"0A1b2c3d-9999-4000-8000-000000000000": "session-0a1b2c3d",
		"01234567":                             "session-01234567",
		"0123-4567-89":                         "session-01234567",
		"s-kit":                                "",
		"0123456":                              "",
	} {
		if got := SessionTeam(in); got != want {
			t.Errorf("SessionTeam(%q) = %q; want %q", in, got, want)
		}
	}
}

// A lead's named spawns without TeamCreate (two at once) create one
// team, session-<8 hex>, which goes with the session's end; such a lead
// is offered neither TeamCreate nor TeamDelete.
func TestImplicitTeam(t *testing.T) {
	dir := t.TempDir()
	s, err := scripted.Parse([]byte(`{"turns":[
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
	base := &approve.Approver{Policy: permission.Policy{Shell: shell.Parse}, Cwd: dir, Mode: permission.ModeDefault}
	lt, err := NewLeadTeam(LeadTeamConfig{
		Mates:   InProcess{Cwd: dir, Model: scripted.New(s), Approver: base, Run: Run{Now: time.Now}},
		Stores:  Stores{Teams: st.Teams(), Mail: st.Mail(), Tasks: st.Tasks()},
		Backend: inprocess.New(), BackendReason: "asked for", Session: "c0ffee12-3456-4789-8abc-def012345678", Approver: base, Registry: reg,
		Deliver: func(string) {},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = lt.Lead.Close(ctx)
	})
	var taskCreate tool.Tool
	for _, tl := range lt.Tools(nil, time.Now) {
		switch n := tl.Spec().Name; n {
		case "TeamCreate", "TeamDelete":
			t.Errorf("a lead whose team is implicit is offered %s", n)
		case "TaskCreate":
			taskCreate = tl
		}
	}
	// The task list before anybody is spawned: the call makes the
	// session's team.
	res, err := taskCreate.Run(t.Context(), tool.Call{ID: "c1", Name: "TaskCreate", Input: json.RawMessage(`{"subject": "first", "description": "before the team"}`)})
	if err != nil || res.IsError {
		t.Fatalf("TaskCreate before any spawn: %+v, %v", res, err)
	}
	if tasks, err := st.Tasks().List(t.Context(), "session-c0ffee12"); err != nil || len(tasks) != 1 {
		t.Fatalf("the session's task list after TaskCreate: %v, %v; want the one task", tasks, err)
	}
	mates := lt.Teammates()
	var wg sync.WaitGroup
	for _, name := range []string{"ann", "bob"} {
		wg.Go(func() {
			info, err := mates.SpawnTeammate(t.Context(), agenttool.TeammateRequest{Name: name, Prompt: "hello"})
			if err != nil {
				t.Errorf("SpawnTeammate(%s) without a team: %v", name, err)
				return
			}
			if info.Team != "session-c0ffee12" {
				t.Errorf("%s joined team %q; want session-c0ffee12", name, info.Team)
			}
		})
	}
	wg.Wait()
	cfg, err := st.Teams().Get(t.Context(), "session-c0ffee12")
	if err != nil || len(cfg.Members) != 3 {
		t.Fatalf("the session's team: %+v, %v; want the lead, ann and bob", cfg.Members, err)
	}
	if _, err := lt.Lead.EndSession(t.Context()); err != nil {
		t.Fatalf("EndSession: %v", err)
	}
	if _, err := st.Teams().Get(t.Context(), "session-c0ffee12"); err == nil {
		t.Error("the session's team is still there after the session's end")
	}
}
