package workflowcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/cli"
	"github.com/troupe-dev/troupe/workflow"
)

// fixture runs `workflow ARGS` with runs in root and named workflows in
// dirs, agents answered by rn.
func fixture(t *testing.T, root string, dirs []string, rn workflow.Runner, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	c := cli.New(cli.Env{Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }})
	cmd := New(c, Config{
		Open: func(context.Context) (*Env, error) {
			return &Env{Cwd: root, Runner: rn, Root: root, Dirs: dirs, Close: func() {}}, nil
		},
		Lookup: func() ([]string, []string, error) { return dirs, []string{root}, nil },
	})
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	err := cmd.ExecuteContext(t.Context())
	return out.String(), errOut.String(), err
}

var echo = workflow.RunnerFunc(func(_ context.Context, req workflow.Request) (workflow.Reply, error) {
	if strings.Contains(req.Prompt, "fail") {
		return workflow.Reply{}, errors.New("the agent failed")
	}
	return workflow.Reply{Text: "did " + req.Prompt, Usage: workflow.Usage{InputTokens: 3, OutputTokens: 2}}, nil
})

func TestRunFormats(t *testing.T) {
	root, named := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(named, "greet.js"), []byte("export const meta = { name: 'greet', phases: [{ title: 'Say' }] }\nphase('Say')\nreturn await agent('hello ' + args.who)\n"), 0o644)
	out, errOut, err := fixture(t, root, []string{named}, echo, "run", "greet", "--args", `{"who":"you"}`)
	if err != nil || out != "did hello you\n" || !strings.Contains(errOut, "[0] agent 1: done (5 tokens)") {
		t.Errorf("text: %q, %q, %v", out, errOut, err)
	}
	out, _, err = fixture(t, root, []string{named}, echo, "run", "greet", "--args", `{"who":"me"}`, "--output-format", "stream-json")
	var kinds []string
	var last map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) != nil {
			t.Fatalf("not JSON: %q", l)
		}
		kinds = append(kinds, m["subtype"].(string))
		last = m
	}
	if err != nil || strings.Join(kinds, ",") != "workflow_init,phase,agent_queued,agent_started,agent_done,success" || last["result"] != "did hello me" {
		t.Errorf("stream-json: %v, %v\n%s", kinds, err, out)
	}
	if _, _, err := fixture(t, root, nil, echo, "run", "greet"); !errors.Is(err, workflow.ErrNotFound) {
		t.Errorf("unknown name: %v; want ErrNotFound", err)
	}
	if _, _, err := fixture(t, root, nil, echo, "run", "x.js", "--args", "{nope"); err == nil || !strings.Contains(err.Error(), "--args") {
		t.Errorf("bad --args: %v", err)
	}
}

func TestRunFailsAndResumes(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "two.js"), []byte("export const meta = { name: 'two' }\nconst a = await agent('one')\nconst b = await agent(args.second)\nreturn [a, b]\n"), 0o644)
	_, errOut, err := fixture(t, root, nil, echo, "run", "two.js", "--args", `{"second":"fail"}`)
	var ee *cli.ExitError
	if !errors.As(err, &ee) || ee.Code != ExitScript || !strings.Contains(errOut, "the agent failed") {
		t.Fatalf("failing run: %v, %q; want exit 1", err, errOut)
	}
	runs, _ := workflow.ListRuns(root)
	if len(runs) != 1 || runs[0].Status != "failed" {
		t.Fatalf("runs = %+v", runs)
	}
	calls := 0
	counting := workflow.RunnerFunc(func(ctx context.Context, req workflow.Request) (workflow.Reply, error) {
		calls++
		return echo(ctx, req)
	})
	out, _, err := fixture(t, root, nil, counting, "resume", runs[0].ID, "--args", `{"second":"two"}`, "--output-format", "json")
	var res map[string]any
	if err != nil || json.Unmarshal([]byte(out), &res) != nil || res["cached"] != 1.0 || calls != 1 {
		t.Errorf("resume: %s, %v, %d calls; want 1 cached and 1 call", out, err, calls)
	}
	out, _, err = fixture(t, root, nil, echo, "list")
	if err != nil || !strings.Contains(out, runs[0].ID) || !strings.Contains(out, "2 (1 cached)") {
		t.Errorf("list:\n%s %v", out, err)
	}
}
