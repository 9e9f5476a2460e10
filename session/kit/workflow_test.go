package kit

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/llm/scripted"
	"github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/tool"
	"github.com/troupe-dev/troupe/tool/agenttool"
	"github.com/troupe-dev/troupe/transcript"
	"github.com/troupe-dev/troupe/workflow"

	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/approve"
)

func TestAskingAs(t *testing.T) {
	base := &approve.Approver{Agent: "lead"}
	got := askingAs(base, "workflow review: verify a.go").(*approve.Approver)
	if got.Agent != "workflow review: verify a.go" || base.Agent != "lead" {
		t.Errorf("askingAs = %q (base now %q); want the new name on a copy", got.Agent, base.Agent)
	}
	c := underParent(base, func() permission.Mode { return permission.ModeDefault }).(ceiled)
	gc := askingAs(c, "workflow w: x").(ceiled)
	if gc.Agent != "workflow w: x" || c.Agent != "lead" || gc.parent == nil {
		t.Errorf("askingAs(ceiled) = %q (base %q)", gc.Agent, c.Agent)
	}
	if within, err := within("/p", "sub/dir"); err != nil || within != "/p/sub/dir" {
		t.Errorf("within = %q, %v", within, err)
	}
	if _, err := within("/p", "../etc"); err == nil {
		t.Error("within(/p, ../etc) succeeded; want a refusal")
	}
}

// TestWorkflowAgentID: a workflow agent's activity names its id, the
// name of its transcript in the session's folder (what /workflows opens).
func TestWorkflowAgentID(t *testing.T) {
	dir := t.TempDir()
	s, err := scripted.Parse([]byte(`{"turns":[{"match":{"user":"JOB"},"reply":{"text":"job done"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	tx := NewTranscripts(dir, "s1", time.Now, io.Discard)
	tools, err := tool.NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	r := &SubAgentRunner{Cwd: dir, Tools: tools, Factory: func(ctx context.Context, spec agenttool.Spec) (agent.Config, error) {
		return agent.Config{Model: scripted.New(s), ModelName: "scripted", Tools: spec.Tools,
			Transcript: tx.Writer(spec.AgentID, transcript.KindSubAgent, "")}, nil
	}}
	var mu sync.Mutex
	var ids []string
	reply, err := r.RunAgent(t.Context(), workflow.Request{Workflow: "w", Label: "one", Prompt: "JOB", Activity: func(a workflow.Activity) {
		mu.Lock()
		defer mu.Unlock()
		ids = append(ids, a.AgentID)
	}})
	if err != nil || reply.Text != "job done" {
		t.Fatalf("RunAgent = %+v, %v", reply, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(ids) == 0 || ids[0] == "" || task.ID(ids[0]).TypeOf() != task.LocalAgent {
		t.Fatalf("activity agent ids %q; want the agent's a... id first", ids)
	}
	if _, err := os.Stat(filepath.Join(transcript.Dir(dir, "s1"), transcript.FileName(ids[0]))); err != nil {
		t.Errorf("no transcript named by the agent id: %v", err)
	}
}
