package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/cli/agentflags"
	"github.com/troupe-dev/troupe/cli/mate"
	"github.com/troupe-dev/troupe/session"
	"github.com/troupe-dev/troupe/task"
)

// A session driven through its methods alone, with the lead built as the
// interactive lead builds it (openLead) and a real team of in-process
// teammates: a teammate's question answered "allow always" is not asked
// of the next teammate; a person's message reaches a teammate; a
// teammate is stopped by its task id; a running turn is backgrounded and
// brought back; a turn is interrupted. The event stream tells each step.
func TestSessionDrivenTeam(t *testing.T) {
	dir := t.TempDir()
	script := `{"turns":[
 {"match":{"system":"You are troupe,","user":"form a team"},"reply":{"tool_calls":[
   {"name":"TeamCreate","input":{"team_name":"drive","description":"drive a session"}},
   {"name":"Agent","input":{"description":"first","name":"alice","prompt":"make the team file"}}]}},
 {"match":{"system":"You are troupe,","user":"ALICE-DONE"},"reply":{"tool_calls":[
   {"name":"Agent","input":{"description":"second","name":"bob","prompt":"make the team file too"}}]}},
 {"match":{"system":"You are troupe,","user":"long turn"},"reply":{"delay_ms":1500,"text":"LONG-FINISHED"}},
 {"match":{"system":"You are troupe,","user":"slow turn"},"reply":{"delay_ms":60000,"text":"never"}},
 {"match":{"system":"You are troupe,"},"reply":{"text":"Noted."},"repeat":true},
 {"match":{"system":"You are teammate","user":"shutdown_request"},"reply":{"tool_calls":[{"name":"SendMessage","input":{"to":"team-lead","message":{"type":"shutdown_response","request_id":"{{capture:\"request_id\": \"(shutdown-[^\"]+)\"}}","approve":true}}}]},"repeat":true},
 {"match":{"system":"You are teammate","turn":0},"reply":{"tool_calls":[{"name":"Bash","input":{"command":"touch team-file"}}]},"repeat":true},
 {"match":{"system":"You are teammate alice","tool_result":"Bash"},"reply":{"tool_calls":[{"name":"SendMessage","input":{"to":"team-lead","summary":"done","message":"ALICE-DONE"}}]}},
 {"match":{"system":"You are teammate bob","tool_result":"Bash"},"reply":{"tool_calls":[{"name":"SendMessage","input":{"to":"team-lead","summary":"done","message":"BOB-DONE"}}]}},
 {"match":{"system":"You are teammate alice","user":"ping-from-person"},"reply":{"tool_calls":[{"name":"SendMessage","input":{"to":"team-lead","summary":"pong","message":"PONG-FROM-ALICE"}}]}},
 {"match":{"system":"You are teammate"},"reply":{"text":"Waiting."},"repeat":true}
]}`
	scriptFile := filepath.Join(dir, "script.json")
	writeFile(t, scriptFile, script)
	var stderr bytes.Buffer
	a := newApp(Main{Stdout: &bytes.Buffer{}, Stderr: &stderr, Getenv: func(string) string { return "" },
		HomeDir: func() (string, error) { return dir, nil }})
	a.HomeFlag = filepath.Join(dir, "home")
	trustTemp(t, a.HomeFlag) // main_test.go
	h := &headless{outputFormat: "text", model: agentflags.Model{Provider: "scripted", Script: scriptFile}, maxTurns: 50, cwd: dir, perm: agentflags.Permissions{PromptTimeout: time.Minute},
		teams: teamFlags{enabled: true, explicit: true, mate: &mate.Flags{TeammateMode: "in-process"}, shut: 10 * time.Second}}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	lr, err := a.openLead(ctx, h, dir, true)
	if lr != nil {
		defer lr.close()
	}
	if err != nil {
		t.Fatalf("openLead: %v\n%s", err, stderr.String())
	}
	sess := lr.bg.sess
	sub := sess.Subscribe(false)
	defer sub.Close()
	sctx, stopServe := context.WithCancel(ctx)
	served := make(chan struct{})
	go func() { defer close(served); sess.Serve(sctx) }()
	defer func() { stopServe(); <-served }()
	defer lr.bg.endTeam(false)

	var seen []session.Event
	until := func(what string, ok func(session.Event) bool) session.Event {
		t.Helper()
		for {
			e, err := sub.Next(ctx)
			if err != nil {
				var b strings.Builder
				for _, e := range seen[max(0, len(seen)-40):] {
					b.WriteString(describe(e) + "\n")
				}
				t.Fatalf("waiting for %s: %v; the last events:\n%s", what, err, b.String())
			}
			seen = append(seen, e)
			if ok(e) {
				return e
			}
		}
	}
	message := func(from, text string) func(session.Event) bool {
		return func(e session.Event) bool {
			return e.Kind == session.KindMessage && e.Team != nil && e.Team.Agent == from && strings.Contains(e.Team.Body, text)
		}
	}

	sess.Submit(ctx, "form a team")
	q := until("alice's question", func(e session.Event) bool { return e.Kind == session.KindPermission })
	if q.Question.Agent != "alice" || !q.Question.Teammate || q.Question.Tool != "Bash" {
		t.Fatalf("the first question: %+v", q.Question)
	}
	if err := sess.Answer(q.Question.ID, session.Verdict{Allow: true, Always: true}); err != nil {
		t.Fatal(err)
	}
	until("alice's report", message("alice", "ALICE-DONE"))
	mark := len(seen)
	until("bob's report", message("bob", "BOB-DONE"))
	for _, e := range seen[mark:] {
		if e.Kind == session.KindPermission {
			t.Fatalf("bob was asked after allow always: %+v", e.Question)
		}
	}

	if err := sess.SendTo(ctx, "alice", "ping-from-person"); err != nil {
		t.Fatal(err)
	}
	until("alice's answer to the person", message("alice", "PONG-FROM-ALICE"))

	var bobTask task.ID
	for _, st := range sess.Registry().List() {
		if d, ok := st.Detail.(*task.Teammate); ok && d.AgentName == "bob" && st.Status.Active() {
			bobTask = st.ID
		}
	}
	if bobTask == "" {
		t.Fatal("bob is not a running in_process_teammate task")
	}
	if st, err := sess.Stop(ctx, string(bobTask)); err != nil || st.Status != task.Killed {
		t.Fatalf("stop bob by task id: %v %v", st.Status, err)
	}
	until("bob's task end", func(e session.Event) bool {
		return e.Kind == session.KindTaskEnded && e.Task.State.ID == bobTask
	})

	// A prompt given to an idle lead starts a run of its own (a busy
	// lead would take it with the run under way).
	waitIdle := func() {
		for leadBusy(sess) {
			if ctx.Err() != nil {
				t.Fatal("the lead never became idle")
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitIdle()
	sess.Submit(ctx, "long turn")
	until("the long turn to reach the lead", prompted("long turn"))
	var id task.ID
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if id, err = sess.Background(ctx); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("Background: %v", err)
		}
	}
	until("backgrounded", func(e session.Event) bool { return e.Kind == session.KindBackgrounded && e.TaskID == string(id) })
	if err := sess.Foreground(ctx, id); err != nil {
		t.Fatalf("Foreground: %v", err)
	}
	// Its answer comes to the foreground; the run may go on with input
	// that came meanwhile (the team's idle digest) before it ends.
	until("the long turn's answer", func(e session.Event) bool {
		return e.Kind == session.KindText && e.TaskID == "" && e.Agent.Message != nil && e.Agent.Message.Text() == "LONG-FINISHED"
	})
	until("the run's end", func(e session.Event) bool { return e.Kind == session.KindTurnEnded })

	waitIdle()
	sess.Submit(ctx, "slow turn")
	until("the slow turn to reach the lead", prompted("slow turn"))
	for deadline := time.Now().Add(10 * time.Second); !sess.Interrupt(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no turn to interrupt")
		}
	}
	until("the interrupted turn's end", func(e session.Event) bool {
		return e.Kind == session.KindTurnEnded && e.Result != nil && e.Result.Interrupted
	})
}

// prompted matches the event that says the lead took prompt: a run
// started with it, or (a run was under way) its user message.
func prompted(prompt string) func(session.Event) bool {
	return func(e session.Event) bool {
		if e.Kind == session.KindTurnStarted && e.Text == prompt {
			return true
		}
		return e.Agent != nil && e.TaskID == "" && e.Agent.Type == agent.EventUser && e.Agent.Message != nil && strings.Contains(e.Agent.Message.Text(), prompt)
	}
}

// leadBusy reports whether the session's lead is in a run.
func leadBusy(s *session.Session) bool { return s.Lead().Pending() > 0 || s.Running() }

// describe is one line about an event, for a failure's report.
func describe(e session.Event) string {
	s := string(e.Kind)
	switch {
	case e.Team != nil:
		s += " " + e.Team.Agent + " " + e.Team.Kind + " " + e.Team.Text
	case e.Task != nil:
		s += " " + string(e.Task.State.ID) + " " + string(e.Task.State.Status) + " " + e.Task.State.Description
	case e.Agent != nil:
		s += " " + string(e.Agent.Type) + " task=" + e.TaskID
		if e.Agent.Message != nil {
			s += " " + e.Agent.Message.Text()
		}
	case e.Result != nil:
		s += " " + e.Result.Text
	}
	if e.Text != "" {
		s += " text=" + e.Text
	}
	if e.TaskID != "" {
		s += " task=" + e.TaskID
	}
	return s
}
