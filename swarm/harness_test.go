package swarm

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/backend"
	"github.com/troupe-dev/troupe/backend/inprocess"
	"github.com/troupe-dev/troupe/llm/scripted"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/approve"
	"github.com/troupe-dev/troupe/permission/shell"
	"github.com/troupe-dev/troupe/store/mem"
	"github.com/troupe-dev/troupe/team"
	"github.com/troupe-dev/troupe/tool"
)

// harness is a lead with in-process teammates on a memory store, whose
// models follow one script. It tests swarm's own mechanisms (wakes,
// digests, what is owed, deaths, budgets, BeforeIdle), so it sets the
// knobs of TeammateConfig that session/kit fixes, and gives teammates no
// tools but the ones a test asks for. The team protocol as a session runs
// it (the team tools, the teammates' prompt and permission layer) is
// tested on the kits themselves: session/kit's protocol_test.go and
// TestLeadTeam.
type harness struct {
	t     testing.TB
	quiet bool // no event log (benchmarks)
	store *mem.Store
	lead  *Lead
	model *scripted.Model

	mu     sync.Mutex
	events []Event
	input  []string // what the lead's model was handed
	mates  map[string]*Teammate
	kick   chan struct{}

	// tools, when set, builds each teammate's extra tools.
	tools func(tm *Teammate, m team.Member) []tool.Tool
	// mateCfg, when set, adjusts each teammate's configuration.
	mateCfg func(*TeammateConfig)
	// run, when set, replaces a teammate's Run (to fake deaths).
	run func(ctx context.Context, tm *Teammate) error
}

func newHarness(t testing.TB, script string, opt func(*LeadConfig)) *harness {
	t.Helper()
	s, err := scripted.Parse([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, store: mem.New(mem.Options{}), model: scripted.New(s), mates: map[string]*Teammate{}, kick: make(chan struct{}, 1)}
	cfg := LeadConfig{Teams: h.store.Teams(), Mail: h.store.Mail(), Tasks: h.store.Tasks(), Session: "s-1", Cwd: t.TempDir(),
		Policy: permission.Policy{Shell: shell.Parse}, Backend: inprocess.New(), Launch: h.launch, OnEvent: h.onEvent, Deliver: h.deliver, ShutdownTimeout: 2 * time.Second}
	if opt != nil {
		opt(&cfg)
	}
	if h.lead, err = NewLead(cfg); err != nil {
		t.Fatal(err)
	}
	base := runtime.NumGoroutine()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := h.lead.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
		h.store.Close()
		// No goroutine outlives the lead: teammates, watches, handlers.
		deadline := time.Now().Add(10 * time.Second)
		for runtime.NumGoroutine() > base && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > base {
			buf := make([]byte, 1<<20)
			t.Errorf("%d goroutines after Close, %d before the lead:\n%s", n, base, buf[:runtime.Stack(buf, true)])
		}
	})
	return h
}

func (h *harness) onEvent(e Event) {
	h.mu.Lock()
	h.events = append(h.events, e)
	h.mu.Unlock()
	if !h.quiet {
		h.t.Logf("%s %-10s %s", e.Agent, e.Kind, e.Text)
	}
	h.signal()
}

func (h *harness) deliver(text string) {
	h.mu.Lock()
	h.input = append(h.input, text)
	h.mu.Unlock()
	h.signal()
}

func (h *harness) signal() {
	select {
	case h.kick <- struct{}{}:
	default:
	}
}

func (h *harness) launch(ctx context.Context, l *Lead, m team.Member, r SpawnRequest, be string) (backend.Spec, error) {
	return backend.Spec{Run: func(ctx context.Context) error {
		base := &approve.Approver{Cwd: l.cfg.Cwd, Policy: permission.Policy{Shell: shell.Parse}, Mode: permission.ModeAcceptEdits,
			Asker: approve.AskerFunc(func(ctx context.Context, req approve.AskRequest) (approve.Answer, error) {
				return l.AskInProcess(ctx, m.Name, m.Color, req)
			})}
		if r.PlanModeRequired {
			base.Mode = permission.ModePlan
		}
		appr := NewApprover(base)
		tc := TeammateConfig{Team: l.Team(), Name: m.Name, Color: m.Color, PaneID: m.TmuxPaneID, Backend: be,
			Teams: h.store.Teams(), Mail: h.store.Mail(), Tasks: h.store.Tasks(), Prompt: r.Prompt, PlanMode: r.PlanModeRequired,
			OnEvent: h.onEvent, AskTimeout: 5 * time.Second,
			SetMode:       func(mode string) string { _ = appr.SetMode(mode); return string(appr.Mode()) },
			AddAllowRules: func(rules []string) { _ = appr.AddAllowRules(rules) },
			Build: func(tm *Teammate) (agent.Config, error) {
				var ts []tool.Tool
				if h.tools != nil {
					ts = h.tools(tm, m)
				}
				reg, err := tool.NewRegistry(ts...)
				if err != nil {
					return agent.Config{}, err
				}
				return agent.Config{Model: h.model, System: "You are teammate " + m.Name + ".", Tools: reg, Approver: appr}, nil
			}}
		if h.mateCfg != nil {
			h.mateCfg(&tc)
		}
		tm, err := NewTeammate(tc)
		if err != nil {
			return err
		}
		h.mu.Lock()
		h.mates[m.Name] = tm
		h.mu.Unlock()
		if h.run != nil {
			return h.run(ctx, tm)
		}
		return tm.Run(ctx)
	}}, nil
}

// waitFor waits until cond holds, re-checking on every event, for at
// most 20 s.
func (h *harness) waitFor(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.After(20 * time.Second)
	for !cond() {
		select {
		case <-h.kick:
		case <-time.After(100 * time.Millisecond): // a condition on the store may change without an event
		case <-deadline:
			h.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func (h *harness) hasEvent(agent, kind, contains string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, e := range h.events {
		if e.Agent == agent && e.Kind == kind && strings.Contains(e.Text, contains) {
			return true
		}
	}
	return false
}

func (h *harness) inputs() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return strings.Join(h.input, "\n---\n")
}

func (h *harness) create(name string) team.Config {
	h.t.Helper()
	cfg, err := h.lead.CreateTeam(context.Background(), name, "a test team", "")
	if err != nil {
		h.t.Fatal(err)
	}
	return cfg
}

func (h *harness) spawn(name, prompt string) SpawnInfo {
	h.t.Helper()
	info, err := h.lead.Spawn(context.Background(), SpawnRequest{Name: name, Prompt: prompt, Description: "test " + name})
	if err != nil {
		h.t.Fatal(err)
	}
	return info
}

func (h *harness) member(teamName, name string) (team.Member, bool) {
	cfg, err := h.store.Teams().Get(context.Background(), teamName)
	if err != nil {
		return team.Member{}, false
	}
	m, ok := cfg.Member(name)
	if !ok {
		return team.Member{}, false
	}
	return *m, true
}

// send puts a message in name's inbox from from.
func (h *harness) send(teamName, from, to string, f mailbox.Frame) {
	h.t.Helper()
	text := ""
	if t, ok := f.(mailbox.Text); ok {
		text = string(t)
	} else {
		var err error
		if text, err = mailbox.Encode(f); err != nil {
			h.t.Fatal(err)
		}
	}
	if _, err := h.store.Mail().Send(context.Background(), teamName, to, mailbox.Message{From: from, Text: text}); err != nil {
		h.t.Fatal(err)
	}
}

func script(turns ...string) string {
	return fmt.Sprintf(`{"turns":[%s]}`, strings.Join(turns, ","))
}

// reported reports whether an idle notification in the lead's digest
// carries result.
func (h *harness) reported(result string) bool {
	h.lead.mu.Lock()
	defer h.lead.mu.Unlock()
	for _, d := range h.lead.digest {
		if d.Result == result {
			return true
		}
	}
	return false
}
