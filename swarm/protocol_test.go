package swarm

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/team"
	"github.com/troupe-dev/troupe/tool"

	"github.com/troupe-dev/troupe/tool/teamtool"
)

// withTeamTools gives the harness's teammates the real team tools, wired
// to the runner's hooks.
func withTeamTools(h *harness) {
	h.tools = func(tm *Teammate, m team.Member) []tool.Tool {
		self := teamtool.Self{Team: h.lead.Team(), Name: m.Name, Color: m.Color, PaneID: "in-process", Backend: "in-process"}
		return teamtool.Tools(teamtool.Config{Teams: h.store.Teams(), Mail: h.store.Mail(), Tasks: h.store.Tasks(),
			Self:  func() teamtool.Self { return self },
			Hooks: teamtool.Hooks{ShutdownApproved: tm.ShutdownApproved, PlanSubmitted: tm.PlanSubmitted}})
	}
}

// leadSend sends a structured or plain message as the lead, through the
// lead's SendMessage tool.
func leadSend(t *testing.T, h *harness, input string) string {
	t.Helper()
	tools := teamtool.Tools(teamtool.Config{Teams: h.store.Teams(), Mail: h.store.Mail(), Tasks: h.store.Tasks(), Lead: h.lead,
		Self:  func() teamtool.Self { return teamtool.Self{Team: h.lead.Team(), Name: team.LeadName, Lead: true} },
		Hooks: teamtool.Hooks{PlanDigest: h.lead.PlanDigest}})
	for _, tl := range tools {
		if tl.Spec().Name == "SendMessage" {
			res, err := tl.Run(context.Background(), tool.Call{ID: "toolu_lead", Name: "SendMessage", Input: []byte(input)})
			if err != nil || res.IsError {
				t.Fatalf("lead SendMessage %s: %v %s", input, err, res.Content)
			}
			return res.Content
		}
	}
	t.Fatal("no SendMessage tool")
	return ""
}

// A shutdown request reaches the model, which rejects it with a reason
// the first time (the teammate keeps running) and approves it the second
// time: the teammate ends, leaves the team, and its task goes back.
func TestShutdownRejectThenApprove(t *testing.T) {
	capture := `{{capture:\"request_id\": \"(shutdown-[^\"]+)\"}}`
	h := newHarness(t, script(
		`{"match":{"system":"teammate jill","turn":0},"reply":{"text":"ready"}}`,
		`{"match":{"system":"teammate jill","user":"still building"},"reply":{"tool_calls":[{"name":"SendMessage","input":{"to":"team-lead","message":{"type":"shutdown_response","request_id":"`+capture+`","approve":false,"reason":"still migrating the schema"}}}]}}`,
		`{"match":{"system":"teammate jill","user":"all done now"},"reply":{"tool_calls":[{"name":"SendMessage","input":{"to":"team-lead","message":{"type":"shutdown_response","request_id":"`+capture+`","approve":true}}}]}}`,
		`{"match":{"system":"teammate jill","tool_result":"SendMessage"},"reply":{"text":"ok"},"repeat":true}`,
	), nil)
	withTeamTools(h)
	cfg := h.create("shut")
	h.spawn("jill", "stand by")
	h.waitFor("jill idle", func() bool { return h.hasEvent("jill", EventIdle, "") })
	leadSend(t, h, `{"to":"jill","message":{"type":"shutdown_request","reason":"still building?"}}`)
	h.waitFor("the rejection", func() bool { return h.hasEvent("jill", EventShutdown, "rejected shutdown: still migrating the schema") })
	h.waitFor("the lead's model to see the rejection", func() bool { return strings.Contains(h.inputs(), "still migrating the schema") })
	if n := h.lead.Running(); n != 1 {
		t.Fatalf("after a rejected shutdown %d teammates run, want jill still running", n)
	}
	leadSend(t, h, `{"to":"jill","message":{"type":"shutdown_request","reason":"all done now"}}`)
	h.waitFor("jill gone", func() bool { return h.hasEvent("jill", EventExit, "has shut down") })
	if _, ok := h.member(cfg.Name, "jill"); ok {
		t.Error("jill is still in the team file after shutting down")
	}
	if h.hasEvent("jill", EventDead, "") {
		t.Error("an approved shutdown was reported as a death")
	}
	h.waitFor("the lead to hear the team is empty", func() bool { return strings.Contains(h.inputs(), "All teammates have shut down") })
}

// A teammate that must plan first works read-only: its write is refused
// until the lead approves the plan. A rejection comes back with feedback
// (still read-only); the approval switches it to default mode, never
// bypass, and carries the plan's digest.
func TestPlanApprovalRejectThenApprove(t *testing.T) {
	h := newHarness(t, script(
		`{"match":{"system":"teammate kim","turn":0},"reply":{"tool_calls":[{"name":"ExitPlanMode","input":{"plan":"1. edit a.go"}}]}}`,
		// The verdicts first: one may come in with a tool result.
		`{"match":{"system":"teammate kim","user":"[Plan Rejected]"},"reply":{"tool_calls":[{"name":"ExitPlanMode","input":{"plan":"1. edit a.go\n2. add a test"}}]}}`,
		`{"match":{"system":"teammate kim","user":"[Plan Approved]"},"reply":{"text":"carrying out the plan"}}`,
		`{"match":{"system":"teammate kim","tool_result":"ExitPlanMode"},"reply":{"text":"waiting for approval"},"repeat":true}`,
	), nil)
	var modes []string
	h.mateCfg = func(c *TeammateConfig) {
		prev := c.SetMode
		c.SetMode = func(m string) { prev(m); h.mu.Lock(); modes = append(modes, m); h.mu.Unlock() }
	}
	withTeamTools(h)
	h.create("plans")
	if _, err := h.lead.Spawn(context.Background(), SpawnRequest{Name: "kim", Prompt: "plan the change", PlanModeRequired: true}); err != nil {
		t.Fatal(err)
	}
	var first mailbox.PlanApprovalRequest
	h.waitFor("the first plan", func() bool {
		in := h.inputs()
		i := strings.Index(in, `{"type":"plan_approval_request"`)
		if i < 0 {
			return false
		}
		f, err := mailbox.Decode(in[i : i+strings.Index(in[i:], "\n")])
		if err != nil {
			return false
		}
		first = f.(mailbox.PlanApprovalRequest)
		return true
	})
	if d, ok := h.lead.PlanDigest(first.RequestID); !ok || d != mailbox.PlanDigest("1. edit a.go") {
		t.Errorf("lead's digest of the plan = %q %v", d, ok)
	}
	leadSend(t, h, `{"to":"kim","message":{"type":"plan_approval_response","request_id":"`+first.RequestID+`","approve":false,"feedback":"add a test"}}`)
	h.waitFor("the rejection", func() bool { return h.hasEvent("kim", EventPlan, "plan rejected: add a test") })
	h.waitFor("the second plan", func() bool { return strings.Count(h.inputs(), `plan_approval_request`) >= 2 })
	in := h.inputs()
	i := strings.LastIndex(in, `{"type":"plan_approval_request"`)
	f, err := mailbox.Decode(in[i : i+strings.Index(in[i:], "\n")])
	if err != nil {
		t.Fatal(err)
	}
	second := f.(mailbox.PlanApprovalRequest)
	h.mu.Lock()
	kim := h.mates["kim"]
	h.mu.Unlock()
	if !kim.Planning() {
		t.Fatal("kim left plan mode on a rejection")
	}
	leadSend(t, h, `{"to":"kim","message":{"type":"plan_approval_response","request_id":"`+second.RequestID+`","approve":true}}`)
	h.waitFor("the approval", func() bool { return h.hasEvent("kim", EventPlan, "plan approved") })
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(modes) != 1 || modes[0] != string(permission.ModeDefault) {
		t.Errorf("modes set = %q, want [default]", modes)
	}
	if kim.Planning() {
		t.Error("kim is still in plan mode after the approval")
	}
}

// A teammate that approves its shutdown ends at once: no model call
// follows the approval (the reply scripted for it would take a minute).
func TestShutdownApprovedEndsTurnAtOnce(t *testing.T) {
	capture := `{{capture:\"request_id\": \"(shutdown-[^\"]+)\"}}`
	h := newHarness(t, script(
		`{"match":{"system":"teammate kim","turn":0},"reply":{"text":"ready"}}`,
		`{"match":{"system":"teammate kim","user":"shutdown_request"},"reply":{"tool_calls":[{"name":"SendMessage","input":{"to":"team-lead","message":{"type":"shutdown_response","request_id":"`+capture+`","approve":true}}}]}}`,
		`{"match":{"system":"teammate kim","tool_result":"SendMessage"},"reply":{"delay_ms":60000,"text":"goodbye"}}`,
	), nil)
	withTeamTools(h)
	h.create("fast")
	h.spawn("kim", "stand by")
	h.waitFor("kim idle", func() bool { return h.hasEvent("kim", EventIdle, "kim is idle") })
	calls := h.model.Calls()
	leadSend(t, h, `{"to":"kim","message":{"type":"shutdown_request","reason":"done"}}`)
	h.waitFor("kim has shut down", func() bool { return h.hasEvent("kim", EventExit, "kim has shut down") })
	if got := h.model.Calls() - calls; got != 1 {
		t.Errorf("%d model calls after the shutdown request, want 1 (the approval, nothing after it)", got)
	}
}

// With LeadConfig.AnswerPlan (a person at the helm), a teammate's plan
// goes to it instead of the lead's model: a rejection comes back with
// its feedback, an approval lets the teammate out of plan mode.
func TestPlanAnsweredByPerson(t *testing.T) {
	var mu sync.Mutex
	var asked []PlanAsk
	h := newHarness(t, script(
		`{"match":{"system":"teammate kim","turn":0},"reply":{"tool_calls":[{"name":"ExitPlanMode","input":{"plan":"1. edit a.go"}}]}}`,
		`{"match":{"system":"teammate kim","user":"[Plan Rejected]"},"reply":{"tool_calls":[{"name":"ExitPlanMode","input":{"plan":"1. edit a.go\n2. add a test"}}]}}`,
		`{"match":{"system":"teammate kim","user":"[Plan Approved]"},"reply":{"text":"carrying out the plan"}}`,
		`{"match":{"system":"teammate kim","tool_result":"ExitPlanMode"},"reply":{"text":"waiting for approval"},"repeat":true}`,
	), func(c *LeadConfig) {
		c.AnswerPlan = func(ctx context.Context, a PlanAsk) (PlanAnswer, error) {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, a)
			if len(asked) == 1 {
				return PlanAnswer{Feedback: "add a test"}, nil
			}
			return PlanAnswer{Approve: true}, nil
		}
	})
	withTeamTools(h)
	h.create("plans")
	if _, err := h.lead.Spawn(context.Background(), SpawnRequest{Name: "kim", Prompt: "plan the change", PlanModeRequired: true}); err != nil {
		t.Fatal(err)
	}
	h.waitFor("the approval", func() bool { return h.hasEvent("kim", EventPlan, "the plan of kim was approved") })
	h.waitFor("kim out of plan mode", func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.mates["kim"] != nil && !h.mates["kim"].Planning()
	})
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 2 || asked[0].Plan != "1. edit a.go" || asked[1].Plan != "1. edit a.go\n2. add a test" || asked[0].Worker != "kim" {
		t.Errorf("plans asked: %+v", asked)
	}
	if !h.hasEvent("kim", EventPlan, "sent back (add a test)") {
		t.Error("no event for the plan sent back with its feedback")
	}
	if strings.Contains(h.inputs(), "plan_approval_request") {
		t.Error("the plan reached the lead's model too")
	}
}

// A teammate spawned from a definition with a palette color gets it; the
// lead's own color and a word outside the palette get the next free one.
func TestSpawnColor(t *testing.T) {
	h := newHarness(t, `{"turns": [{"reply": {"text": "ok"}, "repeat": true}]}`, nil)
	h.create("colors")
	for _, tt := range []struct{ name, asked, want string }{
		{"ann", "purple", "purple"},
		{"bob", "red", "blue"},      // red is the lead's
		{"cid", "magenta", "green"}, // not a palette color
		{"dee", "", "yellow"},
	} {
		info, err := h.lead.Spawn(context.Background(), SpawnRequest{Name: tt.name, Prompt: "wait", Color: tt.asked})
		if err != nil {
			t.Fatal(err)
		}
		if info.Color != tt.want {
			t.Errorf("%s asked for %q: color %q; want %q", tt.name, tt.asked, info.Color, tt.want)
		}
	}
}
