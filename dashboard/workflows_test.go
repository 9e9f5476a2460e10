package dashboard_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/dashboard"
	"github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/team"
)

// The team page shows the lead session's workflow runs: each with its
// state, current phase, agents done and tokens, its phases' counts and
// its agents (label, phase, state, tokens, last activity), escaped.
func TestWorkflows(t *testing.T) {
	var asked []string
	run := dashboard.WorkflowRun{Status: "running", Started: time.Date(2026, 12, 8, 2, 0, 0, 0, time.UTC), Detail: &task.Workflow{
		Name: "review-verify", RunID: "wf_0123456789ab", Phase: "Verify",
		Phases: []task.WorkflowPhase{{Title: "Review", Done: 2}, {Title: "Verify", Running: 1}},
		Agents: []task.WorkflowAgent{
			{Index: 0, Label: "review a.go", Phase: "Review", State: "done", Tokens: 4578},
			{Index: 1, Label: "review <b>b.go</b>", Phase: "Review", State: "done", Cached: true, Tokens: 3900},
			{Index: 2, Label: "verify \x1b[31ma.go", Phase: "Verify", State: "running", Tokens: 1200, Activity: "Running go vet ./...", AgentID: "a0000000c"},
		}}}
	f := newFixture(t, dashboard.Config{Workflows: func(session string) ([]dashboard.WorkflowRun, bool) {
		asked = append(asked, session)
		return []dashboard.WorkflowRun{run}, true
	}, Transcript: func(session, agent string) (string, bool) {
		if session == "s-42" && agent == "a0000000c" {
			return "> Verify the finding in a.go\n<b>real</b> \x1b[31mbug\n", true
		}
		return "", false
	}})
	getPath := func(path string, status int) string {
		t.Helper()
		res, err := http.Get(f.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != status {
			t.Errorf("GET %s: %s, want %d", path, res.Status, status)
		}
		return string(b)
	}
	get := func() string { return getPath("/team/alpha", http.StatusOK) }
	if page := get(); strings.Contains(page, `id="workflows"`) {
		t.Errorf("a team without a lead session shows workflows:\n%s", page)
	}
	if _, err := f.other.Teams().Update(t.Context(), "alpha", func(c *team.Config) error { c.LeadSessionID = "s-42"; return nil }); err != nil {
		t.Fatal(err)
	}
	page := get()
	for _, want := range []string{
		`<details class="workflow" data-run="wf_0123456789ab" open><summary><b>review-verify</b> <code>wf_0123456789ab</code> <span class="state running">running</span> · phase Verify · 2/3 agents done · 9,678 tokens`,
		`<tr class="phase" data-phase="Review"><td>Review</td><td>0</td><td>0</td><td>2</td><td>0</td></tr>`,
		`<tr class="phase current" data-phase="Verify"><td>Verify</td><td>0</td><td>1</td><td>0</td><td>0</td></tr>`,
		`<td>review &lt;b&gt;b.go&lt;/b&gt; <small>(from the journal)</small></td>`,
		`<tr class="wf-agent" data-index="2" data-state="running"><td>2</td><td><a href="/team/alpha/workflow/wf_0123456789ab/agent/2">verify \x1b[31ma.go</a></td><td>Verify</td><td class="state running">running</td><td>1,200</td><td>Running go vet ./...</td></tr>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s:\n%s", want, page)
		}
	}
	if len(asked) == 0 || asked[len(asked)-1] != "s-42" {
		t.Errorf("Workflows asked for %v; want the lead's session s-42", asked)
	}
	// The agent's page: its transcript, escaped; one without an id says
	// why it has none; an unknown agent or run is a 404.
	if p := getPath("/team/alpha/workflow/wf_0123456789ab/agent/2", http.StatusOK); !strings.Contains(p, `&lt;b&gt;real&lt;/b&gt; \x1b[31mbug`) || !strings.Contains(p, "workflow review-verify") {
		t.Errorf("the agent's page:\n%s", p)
	}
	if p := getPath("/team/alpha/workflow/wf_0123456789ab/agent/0", http.StatusOK); !strings.Contains(p, "has no transcript in this session") {
		t.Errorf("the page of an agent without an id:\n%s", p)
	}
	getPath("/team/alpha/workflow/wf_0123456789ab/agent/9", http.StatusNotFound)
	getPath("/team/alpha/workflow/wf_000000000000/agent/0", http.StatusNotFound)
}

// TestWorkflowsLive: a change of a workflow run that WatchWorkflows
// reports reaches the team page's event stream.
func TestWorkflowsLive(t *testing.T) {
	var mu sync.Mutex
	state := "running"
	kick := make(chan struct{}, 1)
	f := newFixture(t, dashboard.Config{
		Workflows: func(string) ([]dashboard.WorkflowRun, bool) {
			mu.Lock()
			defer mu.Unlock()
			return []dashboard.WorkflowRun{{Status: "running", Detail: &task.Workflow{Name: "wf", RunID: "wf_0123456789ab",
				Agents: []task.WorkflowAgent{{Index: 0, Label: "only", State: state}}}}}, true
		},
		WatchWorkflows: func(ctx context.Context, session string) (<-chan struct{}, error) {
			if session != "s-42" {
				return nil, fmt.Errorf("watch of session %q, want s-42", session)
			}
			out := make(chan struct{})
			go func() {
				defer close(out)
				for {
					select {
					case <-ctx.Done():
						return
					case <-kick:
						out <- struct{}{}
					}
				}
			}()
			return out, nil
		},
	})
	if _, err := f.other.Teams().Update(t.Context(), "alpha", func(c *team.Config) error { c.LeadSessionID = "s-42"; return nil }); err != nil {
		t.Fatal(err)
	}
	next := stream(t, f.srv.URL+"/team/alpha/events")
	if first := next(); !strings.Contains(first, `data-state="running"`) || strings.Contains(first, "problem") {
		t.Fatalf("first event:\n%s", first)
	}
	mu.Lock()
	state = "done"
	mu.Unlock()
	kick <- struct{}{}
	if ev := next(); !strings.Contains(ev, `data-state="done"`) || !strings.Contains(ev, "1/1 agents done") {
		t.Fatalf("event after the run changed:\n%s", ev)
	}
}
