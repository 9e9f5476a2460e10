package dashboard_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/backend"
	"github.com/troupe-dev/troupe/backend/inprocess"
	"github.com/troupe-dev/troupe/dashboard"
	"github.com/troupe-dev/troupe/llm/scripted"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/approve"
	"github.com/troupe-dev/troupe/swarm"
	"github.com/troupe-dev/troupe/team"
	"github.com/troupe-dev/troupe/tool"
)

// TestBrowserInProcessPermission answers an in-process teammate's
// permission request from the page: a real lead (swarm.Lead) runs carol on
// a goroutine; its own queue is a person who does not answer; the
// question shows on the page (mirrored in the lead's inbox), "Allow once"
// there lets carol's call run, and the lead's question is withdrawn.
func TestBrowserInProcessPermission(t *testing.T) {
	ctx := browser(t)
	f := newFixture(t, dashboard.Config{Control: true})
	ran := filepath.Join(t.TempDir(), "ran")
	input, _ := json.Marshal(map[string]string{"path": ran})
	script, err := json.Marshal(scripted.Script{Turns: []scripted.Turn{
		{Match: scripted.Match{User: "make the file"}, Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{{Name: "Touch", Input: input}}}},
		{Match: scripted.Match{ToolResult: "Touch"}, Reply: scripted.Reply{Text: "done"}},
		{Reply: scripted.Reply{Text: "ok"}, Repeat: true},
	}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := scripted.Parse(script)
	if err != nil {
		t.Fatal(err)
	}
	model := scripted.New(s)
	var withdrawn atomic.Bool
	var lead *swarm.Lead
	lead, err = swarm.NewLead(swarm.LeadConfig{Teams: f.other.Teams(), Mail: f.other.Mail(), Tasks: f.other.Tasks(),
		Session: "s-1", Cwd: f.root, Backend: inprocess.New(),
		Answer: func(ctx context.Context, a swarm.PermissionAsk) (swarm.PermissionAnswer, error) {
			<-ctx.Done() // the person at the terminal does not answer
			withdrawn.Store(true)
			return swarm.PermissionAnswer{}, ctx.Err()
		},
		Launch: func(ctx context.Context, l *swarm.Lead, m team.Member, r swarm.SpawnRequest, be string) (backend.Spec, error) {
			return backend.Spec{Run: func(ctx context.Context) error {
				var tm *swarm.Teammate
				asker := approve.AskerFunc(func(ctx context.Context, req approve.AskRequest) (approve.Answer, error) {
					return tm.AskMirrored(ctx, req, func(ctx context.Context, req approve.AskRequest) (approve.Answer, error) {
						return l.AskInProcess(ctx, m.Name, m.Color, req)
					})
				})
				tm, err := swarm.NewTeammate(swarm.TeammateConfig{Team: l.Team(), Name: m.Name, Color: m.Color,
					Teams: f.other.Teams(), Mail: f.other.Mail(), Tasks: f.other.Tasks(), Prompt: r.Prompt, NoAutoClaim: true,
					Build: func(*swarm.Teammate) (agent.Config, error) {
						reg, err := tool.NewRegistry(touchTool{})
						if err != nil {
							return agent.Config{}, err
						}
						appr := &approve.Approver{Cwd: f.root, Mode: permission.ModeDefault, Asker: asker}
						return agent.Config{Model: model, System: "You are carol.", Tools: reg, Approver: appr}, nil
					}})
				if err != nil {
					return err
				}
				return tm.Run(ctx)
			}}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		lead.Close(cctx)
	})
	if _, err := lead.CreateTeam(t.Context(), "gamma", "an in-process team", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := lead.Spawn(t.Context(), swarm.SpawnRequest{Name: "carol", Prompt: "make the file", Description: "maker"}); err != nil {
		t.Fatal(err)
	}
	shots := t.TempDir()
	run(t, ctx, "open the team page", 10*time.Second,
		chromedp.Navigate(f.srv.URL+"/team/gamma"),
		chromedp.WaitVisible(`#members`),
	)
	until(t, ctx, "carol's request is pending", `document.querySelector('#pending li[data-request^="perm-mirror-"] button[data-act="allow"]') !== null`, 10*time.Second)
	screenshot(t, ctx, shots, "in-process-permission")
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("the call ran before it was allowed")
	}
	run(t, ctx, "allow once", 5*time.Second, chromedp.Click(`#pending button[data-act="allow"]`))
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(ran); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("carol's call did not run within 10 s of the answer")
		}
		time.Sleep(10 * time.Millisecond)
	}
	until(t, ctx, "the request is no longer pending", `document.getElementById('pending') === null`, 5*time.Second)
	for deadline := time.Now().Add(5 * time.Second); !withdrawn.Load(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the lead's own question was not withdrawn when the page answered")
		}
	}
}
