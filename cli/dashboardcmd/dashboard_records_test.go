package dashboardcmd

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/cli"
	"github.com/troupe-dev/troupe/internal/dirwatch"
	"github.com/troupe-dev/troupe/transcript"
	"github.com/troupe-dev/troupe/workflow"
)

// answer answers every workflow agent with its prompt.
type answer struct{}

func (answer) RunAgent(_ context.Context, req workflow.Request) (workflow.Reply, error) {
	if req.Activity != nil {
		req.Activity(workflow.Activity{Text: "starting", AgentID: "a-" + req.Label})
	}
	return workflow.Reply{Text: "ok: " + req.Prompt, Usage: workflow.Usage{InputTokens: 7, OutputTokens: 3}}, nil
}

// TestSessionWorkflows: a workflow run in a session's folder of the home
// is what the dashboard gets for that session, with its phases and agents;
// an unknown or malformed session gets nothing.
func TestSessionWorkflows(t *testing.T) {
	home := t.TempDir()
	a := &app{cli.New(cli.Env{})}
	a.HomeFlag = home
	s, err := workflow.Parse("r.js", `export const meta = { name: "review", description: "d", phases: [{ title: "Review" }, { title: "Report" }] }
phase("Review")
await parallel([() => agent("a", { label: "A" }), () => agent("b", { label: "B" })])
return await agent("r", { label: "R", phase: "Report" })`)
	if err != nil {
		t.Fatal(err)
	}
	j, err := workflow.Prepare(workflow.Launch{Script: s, Root: filepath.Join(transcript.Dir(home, "s1"), "workflows"), Runner: answer{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := j.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	get := a.sessionWorkflows()
	runs, ok := get("s1")
	if !ok || len(runs) != 1 {
		t.Fatalf("runs %+v ok %v; want the one run", runs, ok)
	}
	r := runs[0]
	w := r.Detail
	if r.Status != "completed" || w.RunID != j.ID || w.Name != "review" || len(w.Agents) != 3 {
		t.Fatalf("run %+v detail %+v", r, w)
	}
	if len(w.Phases) != 2 || w.Phases[0].Done != 2 || w.Phases[1].Done != 1 || w.Agents[2].Label != "R" || w.Agents[2].Tokens != 10 || w.Agents[2].AgentID != "a-R" {
		t.Errorf("phases %+v agents %+v", w.Phases, w.Agents)
	}
	for _, session := range []string{"s2", "../s1", ""} {
		if runs, ok := get(session); ok || len(runs) > 0 {
			t.Errorf("session %q: runs %+v ok %v; want none", session, runs, ok)
		}
	}
}

// TestWatchWorkflows: the watch of a session kicks when its first run
// starts, and when a run writes to its folder; it closes with its ctx.
func TestWatchWorkflows(t *testing.T) {
	home := t.TempDir()
	a := &app{cli.New(cli.Env{})}
	a.HomeFlag = home
	if err := os.MkdirAll(transcript.Dir(home, "s1"), 0o755); err != nil {
		t.Fatal(err)
	}
	w, err := dirwatch.New(dirwatch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx, cancel := context.WithCancel(t.Context())
	ch, err := a.watchWorkflows(w)(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	wait := func(what string, poke func()) {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for {
			if poke != nil {
				poke()
			}
			select {
			case <-ch:
				return
			case <-deadline:
				t.Fatalf("no kick after %s", what)
			case <-time.After(50 * time.Millisecond): // poke again: the run's folder may not be watched yet
			}
		}
	}
	s, err := workflow.Parse("r.js", `export const meta = { name: "one", description: "d" }
return await agent("a")`)
	if err != nil {
		t.Fatal(err)
	}
	j, err := workflow.Prepare(workflow.Launch{Script: s, Root: filepath.Join(transcript.Dir(home, "s1"), "workflows"), Runner: answer{}})
	if err != nil {
		t.Fatal(err)
	}
	wait("the run started", nil)
	wait("the run wrote its output", func() { j.Dir.Output("a line") })
	j.Run(t.Context())
	cancel()
	for range ch { // closed once ctx ended
	}
}
