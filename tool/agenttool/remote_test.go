package agenttool_test

import (
	"context"
	"strings"
	"testing"
	"time"

	coreagent "github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/remote"
	"github.com/troupe-dev/troupe/remote/remotetest"
	taskreg "github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/tool/agenttool"
)

// remoteClient adapts a remote.Client to the Agent tool.
type remoteClient struct{ c *remote.Client }

func (r remoteClient) SubmitRemote(ctx context.Context, req agenttool.RemoteRequest) (taskreg.ID, error) {
	st, err := r.c.Submit(ctx, remote.Request{Description: req.Description, Prompt: req.Prompt, Model: req.Model, ToolUseID: req.ToolUseID})
	return st.ID, err
}

func TestRemoteIsolationWithoutWorkers(t *testing.T) {
	tl, specs := setup(t, registry(t), subScript)
	res := run(t, tl, `{"description": "d", "prompt": "x", "isolation": "remote"}`)
	if !res.IsError || !strings.Contains(res.Content, "--store nats://") || !strings.Contains(res.Content, "troupe worker") {
		t.Errorf("remote call without a remote runner = %+v; want an error telling how to get workers", res)
	}
	if len(*specs) != 0 {
		t.Error("the refused remote call reached the factory")
	}
}

func TestRemoteIsolation(t *testing.T) {
	reg := registry(t)
	sub := reg.Subscribe()
	mem := remotetest.New(time.Second, time.Second)
	lead, wconn := mem.Conn(), mem.Conn()
	client, err := remote.NewClient(remote.ClientConfig{Queue: lead, Workers: lead, Tasks: reg, CheckEvery: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	w, err := remote.NewWorker(remote.WorkerConfig{Name: "w", Queue: wconn, Registry: wconn, Heartbeat: 50 * time.Millisecond,
		Run: func(_ context.Context, j remote.Job, _ func(string, remote.Usage)) remote.Result {
			return remote.Result{Text: "remote did: " + j.Prompt}
		}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	defer func() { cancel(); <-done }()
	alive, stop := context.WithTimeout(t.Context(), 10*time.Second)
	defer stop()
	for {
		ok, err := remote.Alive(alive, lead, "w")
		if ok {
			break
		}
		if alive.Err() != nil {
			t.Fatalf("worker w never alive: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	tl := agenttool.New(agenttool.Config{Registry: reg, Remote: remoteClient{client},
		Factory: func(context.Context, agenttool.Spec) (coreagent.Config, error) {
			t.Error("a remote call built a local agent")
			return coreagent.Config{}, nil
		}})
	res := run(t, tl, `{"description": "far away", "prompt": "write notes", "isolation": "remote", "run_in_background": false}`)
	if res.IsError || !strings.Contains(res.Content, "Remote agent submitted") {
		t.Fatalf("remote call = %+v", res)
	}
	wctx, wcancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer wcancel()
	for {
		e, err := sub.Next(wctx)
		if err != nil {
			t.Fatalf("no notification: %v", err)
		}
		if e.Kind == taskreg.EventTerminated && e.Notification != "" {
			if !strings.Contains(e.Notification, "<result>remote did: write notes</result>") || !strings.Contains(e.Notification, "<tool-use-id>toolu_agent</tool-use-id>") {
				t.Errorf("notification:\n%s", e.Notification)
			}
			if !strings.Contains(res.Content, string(e.State.ID)) {
				t.Errorf("the tool result %q does not name the task %s", res.Content, e.State.ID)
			}
			return
		}
	}
}
