package kit

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/backend/inprocess"
	"github.com/troupe-dev/troupe/llm/scripted"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/approve"
	"github.com/troupe-dev/troupe/permission/shell"
	"github.com/troupe-dev/troupe/store/mem"
	"github.com/troupe-dev/troupe/swarm"
	"github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/team"
	"github.com/troupe-dev/troupe/tool"
)

// kitTeam is a lead's team as the kit builds it for a session: the lead's
// team tools, in-process teammates with their real tools, prompt and
// permission layer, on a memory store, with every teammate's model
// following one script. The team protocol's tests (shutdown, plans) run
// on it, so that they cover the wiring a session uses, not a copy of it.
type kitTeam struct {
	t     *testing.T
	cwd   string
	store *mem.Store
	model *scripted.Model
	lt    *LeadTeam
	tools []tool.Tool // the lead's team tools

	mu     sync.Mutex
	events []swarm.Event
	input  []string              // what reached the lead's model
	asked  []swarm.PermissionAsk // the teammates' questions the lead answered (allowed)
}

func newKitTeam(t *testing.T, script func(cwd string) string, opt func(*LeadTeamConfig)) *kitTeam {
	t.Helper()
	k := &kitTeam{t: t, cwd: t.TempDir(), store: mem.New(mem.Options{})}
	s, err := scripted.Parse([]byte(script(k.cwd)))
	if err != nil {
		t.Fatal(err)
	}
	k.model = scripted.New(s)
	reg := task.New(task.Config{Dir: t.TempDir(), PollInterval: -1})
	base := &approve.Approver{Policy: permission.Policy{Shell: shell.Parse}, Cwd: k.cwd, Mode: permission.ModeDefault}
	cfg := LeadTeamConfig{
		Mates:   InProcess{Cwd: k.cwd, Model: k.model, Approver: base, Run: Run{Now: time.Now}, AskTimeout: 10 * time.Second},
		Stores:  Stores{Teams: k.store.Teams(), Mail: k.store.Mail(), Tasks: k.store.Tasks()},
		Backend: inprocess.New(), Session: "s-protocol", Approver: base, Registry: reg, ShutdownAnswerTimeout: 10 * time.Second,
		Answer: func(ctx context.Context, q swarm.PermissionAsk) (swarm.PermissionAnswer, error) {
			k.mu.Lock()
			k.asked = append(k.asked, q)
			k.mu.Unlock()
			return swarm.PermissionAnswer{Allow: true}, nil
		},
		Deliver: func(text string) {
			k.mu.Lock()
			k.input = append(k.input, text)
			k.mu.Unlock()
		},
		OnEvent: func(e swarm.Event) {
			t.Logf("%s %-10s %s", e.Agent, e.Kind, e.Text)
			k.mu.Lock()
			k.events = append(k.events, e)
			k.mu.Unlock()
		},
	}
	if opt != nil {
		opt(&cfg)
	}
	if k.lt, err = NewLeadTeam(cfg); err != nil {
		t.Fatal(err)
	}
	k.tools = k.lt.Tools(nil, time.Now)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = k.lt.Lead.Close(ctx)
		reg.Close(ctx)
		k.store.Close()
	})
	return k
}

// waitFor waits until cond holds, taking the lead's idle digest into
// what reached its model as a session does.
func (k *kitTeam) waitFor(what string, cond func() bool) {
	k.t.Helper()
	waitUntil(k.t, what, func() bool {
		if d := k.lt.Lead.TakeDigest(); d != "" {
			k.mu.Lock()
			k.input = append(k.input, d)
			k.mu.Unlock()
		}
		return cond()
	})
}

func (k *kitTeam) hasEvent(agent, kind, contains string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, e := range k.events {
		if e.Agent == agent && e.Kind == kind && strings.Contains(e.Text, contains) {
			return true
		}
	}
	return false
}

func (k *kitTeam) inputs() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return strings.Join(k.input, "\n---\n")
}

func (k *kitTeam) questions() []swarm.PermissionAsk {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]swarm.PermissionAsk(nil), k.asked...)
}

// leadSend sends a message as the lead, through the lead's own
// SendMessage tool.
func (k *kitTeam) leadSend(input string) string {
	k.t.Helper()
	for _, tl := range k.tools {
		if tl.Spec().Name == "SendMessage" {
			res, err := tl.Run(context.Background(), tool.Call{ID: "toolu_lead", Name: "SendMessage", Input: []byte(input)})
			if err != nil || res.IsError {
				k.t.Fatalf("lead SendMessage %s: %v %s", input, err, res.Content)
			}
			return res.Content
		}
	}
	k.t.Fatal("the lead has no SendMessage tool")
	return ""
}

func (k *kitTeam) create(name string) team.Config {
	k.t.Helper()
	cfg, err := k.lt.Lead.CreateTeam(context.Background(), name, "a test team", "")
	if err != nil {
		k.t.Fatal(err)
	}
	return cfg
}

func (k *kitTeam) spawn(r swarm.SpawnRequest) {
	k.t.Helper()
	if _, err := k.lt.Lead.Spawn(context.Background(), r); err != nil {
		k.t.Fatal(err)
	}
}

func turns(ts ...string) func(string) string {
	return func(string) string { return fmt.Sprintf(`{"turns":[%s]}`, strings.Join(ts, ",")) }
}

const captureShutdown = `{{capture:\"request_id\": \"(shutdown-[^\"]+)\"}}`

// A shutdown request reaches the model, which rejects it with a reason
// the first time (the teammate keeps running) and approves it the second
// time: the teammate ends and leaves the team, and the lead hears that the
// team is empty.
func TestShutdownRejectThenApprove(t *testing.T) {
	k := newKitTeam(t, turns(
		`{"match":{"system":"teammate jill","turn":0},"reply":{"text":"ready"}}`,
		`{"match":{"system":"teammate jill","user":"still building"},"reply":{"tool_calls":[{"name":"SendMessage","input":{"to":"team-lead","message":{"type":"shutdown_response","request_id":"`+captureShutdown+`","approve":false,"reason":"still migrating the schema"}}}]}}`,
		`{"match":{"system":"teammate jill","user":"all done now"},"reply":{"tool_calls":[{"name":"SendMessage","input":{"to":"team-lead","message":{"type":"shutdown_response","request_id":"`+captureShutdown+`","approve":true}}}]}}`,
		`{"match":{"system":"teammate jill","tool_result":"SendMessage"},"reply":{"text":"ok"},"repeat":true}`,
	), nil)
	cfg := k.create("shut")
	k.spawn(swarm.SpawnRequest{Name: "jill", Prompt: "stand by"})
	k.waitFor("jill idle", func() bool { return k.hasEvent("jill", swarm.EventIdle, "") })
	k.leadSend(`{"to":"jill","message":{"type":"shutdown_request","reason":"still building?"}}`)
	k.waitFor("the lead's model to see the rejection", func() bool { return strings.Contains(k.inputs(), "still migrating the schema") })
	if !k.hasEvent("jill", swarm.EventShutdown, "still migrating the schema") {
		t.Error("no timeline event for the rejected shutdown")
	}
	if n := k.lt.Lead.Running(); n != 1 {
		t.Fatalf("after a rejected shutdown %d teammates run, want jill still running", n)
	}
	k.leadSend(`{"to":"jill","message":{"type":"shutdown_request","reason":"all done now"}}`)
	k.waitFor("jill gone", func() bool { return k.hasEvent("jill", swarm.EventExit, "has shut down") })
	if c, err := k.store.Teams().Get(context.Background(), cfg.Name); err != nil {
		t.Fatal(err)
	} else if _, ok := c.Member("jill"); ok {
		t.Error("jill is still in the team file after shutting down")
	}
	if k.hasEvent("jill", swarm.EventDead, "") {
		t.Error("an approved shutdown was reported as a death")
	}
	k.waitFor("the lead to hear the team is empty", func() bool { return strings.Contains(k.inputs(), "All teammates have shut down") })
}

// A teammate that approves its shutdown ends at once: no model call
// follows the approval (the reply scripted for it would take a minute).
func TestShutdownApprovedEndsTurnAtOnce(t *testing.T) {
	k := newKitTeam(t, turns(
		`{"match":{"system":"teammate kim","turn":0},"reply":{"text":"ready"}}`,
		`{"match":{"system":"teammate kim","user":"shutdown_request"},"reply":{"tool_calls":[{"name":"SendMessage","input":{"to":"team-lead","message":{"type":"shutdown_response","request_id":"`+captureShutdown+`","approve":true}}}]}}`,
		`{"match":{"system":"teammate kim","tool_result":"SendMessage"},"reply":{"delay_ms":60000,"text":"goodbye"}}`,
	), nil)
	k.create("fast")
	k.spawn(swarm.SpawnRequest{Name: "kim", Prompt: "stand by"})
	k.waitFor("kim idle", func() bool { return k.hasEvent("kim", swarm.EventIdle, "") })
	calls := k.model.Calls()
	k.leadSend(`{"to":"kim","message":{"type":"shutdown_request","reason":"done"}}`)
	k.waitFor("kim has shut down", func() bool { return k.hasEvent("kim", swarm.EventExit, "has shut down") })
	if got := k.model.Calls() - calls; got != 1 {
		t.Errorf("%d model calls after the shutdown request, want 1 (the approval, nothing after it)", got)
	}
}

// planScript is kim's part in the plan tests: she tries to write a.go in
// plan mode (refused without a question), submits a plan, submits a
// second one when the first is sent back, and writes a.go once the plan
// is approved.
func planScript(cwd string) string {
	file := filepath.Join(cwd, "a.go")
	return turns(
		`{"match":{"system":"teammate kim","turn":0},"reply":{"tool_calls":[{"name":"Write","input":{"file_path":"`+file+`","content":"package a\n"}}]}}`,
		`{"match":{"system":"teammate kim","tool_result":"Write","turn":1},"reply":{"tool_calls":[{"name":"ExitPlanMode","input":{"plan":"1. edit a.go"}}]}}`,
		// The verdicts before the tool results: one may come in with a tool result.
		`{"match":{"system":"teammate kim","user":"[Plan Rejected]"},"reply":{"tool_calls":[{"name":"ExitPlanMode","input":{"plan":"1. edit a.go\n2. add a test"}}]}}`,
		`{"match":{"system":"teammate kim","user":"[Plan Approved]"},"reply":{"tool_calls":[{"name":"Write","input":{"file_path":"`+file+`","content":"package a\n"}}]}}`,
		`{"match":{"system":"teammate kim","tool_result":"ExitPlanMode"},"reply":{"text":"waiting for approval"},"repeat":true}`,
		`{"match":{"system":"teammate kim","tool_result":"Write"},"reply":{"text":"wrote a.go"},"repeat":true}`,
	)(cwd)
}

// checkPlanCarriedOut checks that kim, approved, left plan mode for the
// default mode (never bypass): her write asks the lead, and runs.
func (k *kitTeam) checkPlanCarriedOut() {
	k.t.Helper()
	k.waitFor("kim's write after the approval", func() bool {
		_, err := os.Stat(filepath.Join(k.cwd, "a.go"))
		return err == nil
	})
	if qs := k.questions(); len(qs) != 1 || qs[0].Worker != "kim" || qs[0].Tool != "Write" {
		k.t.Errorf("questions asked: %+v; want kim's one Write, after the approval (default mode asks; plan mode refuses, bypass would not ask)", qs)
	}
}

// A teammate that must plan first works read-only: its write is refused
// until the lead approves the plan. A rejection comes back with feedback
// (still read-only); the approval switches it to default mode, never
// bypass, and the lead keeps the plan's digest.
func TestPlanApprovalRejectThenApprove(t *testing.T) {
	k := newKitTeam(t, planScript, nil)
	k.create("plans")
	k.spawn(swarm.SpawnRequest{Name: "kim", Prompt: "plan the change", PlanModeRequired: true})
	plan := func(nth int) mailbox.PlanApprovalRequest {
		var req mailbox.PlanApprovalRequest
		k.waitFor(fmt.Sprintf("plan %d", nth), func() bool {
			in := k.inputs()
			if strings.Count(in, `{"type":"plan_approval_request"`) < nth {
				return false
			}
			i := strings.LastIndex(in, `{"type":"plan_approval_request"`)
			f, err := mailbox.Decode(in[i : i+strings.Index(in[i:], "\n")])
			if err != nil {
				return false
			}
			req = f.(mailbox.PlanApprovalRequest)
			return true
		})
		return req
	}
	first := plan(1)
	if _, err := os.Stat(filepath.Join(k.cwd, "a.go")); err == nil {
		t.Fatal("kim wrote a.go in plan mode")
	}
	if qs := k.questions(); len(qs) != 0 {
		t.Errorf("kim's write in plan mode asked the lead: %+v; want it refused", qs)
	}
	if d, ok := k.lt.Lead.PlanDigest(first.RequestID); !ok || d != mailbox.PlanDigest("1. edit a.go") {
		t.Errorf("the lead's digest of the plan = %q %v", d, ok)
	}
	k.leadSend(`{"to":"kim","message":{"type":"plan_approval_response","request_id":"` + first.RequestID + `","approve":false,"feedback":"add a test"}}`)
	second := plan(2)
	if second.RequestID == first.RequestID || !strings.Contains(second.PlanContent, "add a test") {
		t.Errorf("second plan %+v; want a new request with the test added", second)
	}
	k.leadSend(`{"to":"kim","message":{"type":"plan_approval_response","request_id":"` + second.RequestID + `","approve":true}}`)
	k.checkPlanCarriedOut()
}

// With LeadTeamConfig.AnswerPlan (a person at the helm), a teammate's
// plan goes to it instead of the lead's model: a rejection comes back
// with its feedback, an approval lets the teammate out of plan mode.
func TestPlanAnsweredByPerson(t *testing.T) {
	var mu sync.Mutex
	var asked []swarm.PlanAsk
	k := newKitTeam(t, planScript, func(c *LeadTeamConfig) {
		c.AnswerPlan = func(ctx context.Context, a swarm.PlanAsk) (swarm.PlanAnswer, error) {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, a)
			if len(asked) == 1 {
				return swarm.PlanAnswer{Feedback: "add a test"}, nil
			}
			return swarm.PlanAnswer{Approve: true}, nil
		}
	})
	k.create("plans")
	k.spawn(swarm.SpawnRequest{Name: "kim", Prompt: "plan the change", PlanModeRequired: true})
	k.checkPlanCarriedOut()
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 2 || asked[0].Plan != "1. edit a.go" || asked[1].Plan != "1. edit a.go\n2. add a test" || asked[0].Worker != "kim" {
		t.Errorf("plans asked: %+v", asked)
	}
	if !k.hasEvent("kim", swarm.EventPlan, "sent back (add a test)") {
		t.Error("no timeline event for the plan sent back with its feedback")
	}
	if strings.Contains(k.inputs(), "plan_approval_request") {
		t.Error("the plan reached the lead's model too")
	}
}

// An approved plan never widens a teammate beyond its lead's mode: under
// a dontAsk lead, the approval's "default" becomes dontAsk, and kim's
// write after it is denied without a question.
func TestPlanApprovalNarrowedToTheLead(t *testing.T) {
	script := func(cwd string) string {
		file := filepath.Join(cwd, "a.go")
		return turns(
			`{"match":{"system":"teammate kim","turn":0},"reply":{"tool_calls":[{"name":"ExitPlanMode","input":{"plan":"1. edit a.go"}}]}}`,
			`{"match":{"system":"teammate kim","user":"[Plan Approved]"},"reply":{"tool_calls":[{"name":"Write","input":{"file_path":"`+file+`","content":"package a\n"}}]}}`,
			`{"match":{"system":"teammate kim","tool_result":"Write"},"reply":{"tool_calls":[{"name":"SendMessage","input":{"to":"team-lead","message":"WRITE-TRIED: {{capture:(dontAsk mode|needs approval|allowed)}}","summary":"tried"}}]}}`,
			`{"match":{"system":"teammate kim"},"reply":{"text":"done"},"repeat":true}`,
		)(cwd)
	}
	k := newKitTeam(t, script, func(c *LeadTeamConfig) {
		c.ModeNow = func() permission.Mode { return permission.ModeDontAsk }
		c.AnswerPlan = func(ctx context.Context, a swarm.PlanAsk) (swarm.PlanAnswer, error) {
			return swarm.PlanAnswer{Approve: true}, nil
		}
	})
	k.create("plans")
	k.spawn(swarm.SpawnRequest{Name: "kim", Prompt: "plan the change", PlanModeRequired: true})
	k.waitFor("kim's word after her write", func() bool { return strings.Contains(k.inputs(), "WRITE-TRIED") })
	if _, err := os.Stat(filepath.Join(k.cwd, "a.go")); err == nil {
		t.Error("kim wrote a.go after the approval: she left plan mode wider than her lead's dontAsk")
	}
	if qs := k.questions(); len(qs) != 0 {
		t.Errorf("kim's write asked the lead: %+v; want it denied (dontAsk)", qs)
	}
	if !strings.Contains(k.inputs(), "WRITE-TRIED: dontAsk mode") {
		t.Errorf("kim's write was not denied by dontAsk mode:\n%s", k.inputs())
	}
}
