package agenttool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
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

// recordingRemote keeps the requests it is asked to submit.
type recordingRemote struct{ reqs *[]agenttool.RemoteRequest }

func (r recordingRemote) SubmitRemote(_ context.Context, req agenttool.RemoteRequest) (taskreg.ID, error) {
	*r.reqs = append(*r.reqs, req)
	return "r00000001", nil
}

// A call's labels reach the remote request, make a call without an
// isolation a remote one, and a bad label is refused naming it, before
// anything is submitted.
func TestRemoteLabels(t *testing.T) {
	var reqs []agenttool.RemoteRequest
	tl := agenttool.New(agenttool.Config{Registry: registry(t), Remote: recordingRemote{&reqs},
		Factory: func(context.Context, agenttool.Spec) (coreagent.Config, error) {
			t.Error("a call with labels built a local agent")
			return coreagent.Config{}, nil
		}})
	long := strings.Repeat("x", 65)
	many := `"l0"`
	for i := 1; i <= 16; i++ {
		many += fmt.Sprintf(`, "l%d"`, i)
	}
	for _, tt := range []struct {
		name, labels, isolation string
		want                    string   // in an error
		sent                    []string // the labels submitted
	}{
		{name: "remote with labels", labels: `["gpu", "linux-arm64", "v1.2_x"]`, isolation: "remote", sent: []string{"gpu", "linux-arm64", "v1.2_x"}},
		{name: "labels imply remote", labels: `["gpu"]`, sent: []string{"gpu"}},
		{name: "empty list is none", labels: `[]`, isolation: "remote", sent: nil},
		{name: "with worktree", labels: `["gpu"]`, isolation: "worktree", want: `they do not go with isolation "worktree"`},
		{name: "space", labels: `["gpu", "big box"]`, want: `labels[1] "big box": a label is letters, digits`},
		{name: "empty label", labels: `[""]`, want: "labels[0] is empty"},
		{name: "too long", labels: `["` + long + `"]`, want: "labels[0] is 65 characters long, at most 64"},
		{name: "twice", labels: `["gpu", "gpu"]`, want: `labels[1] "gpu" is given twice`},
		{name: "too many", labels: "[" + many + "]", want: "labels: 17 given, at most 16"},
		{name: "not strings", labels: `[1]`, want: `field "labels"`},
		{name: "not a list", labels: `"gpu"`, want: `field "labels"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			reqs = nil
			in := `{"description": "d", "prompt": "p", "labels": ` + tt.labels
			if tt.isolation != "" {
				in += `, "isolation": "` + tt.isolation + `"`
			}
			res := run(t, tl, in+"}")
			if tt.want != "" {
				if !res.IsError || !strings.Contains(res.Content, tt.want) {
					t.Errorf("Agent(%s) = %+v; want an error containing %q", in, res, tt.want)
				}
				if len(reqs) != 0 {
					t.Errorf("a refused call was submitted: %+v", reqs)
				}
				return
			}
			if res.IsError || len(reqs) != 1 {
				t.Fatalf("Agent(%s) = %+v, %d submitted; want one submission", in, res, len(reqs))
			}
			if !slices.Equal(reqs[0].Labels, tt.sent) {
				t.Errorf("submitted labels = %q; want %q", reqs[0].Labels, tt.sent)
			}
			if len(tt.sent) > 0 && !strings.Contains(res.Content, "labels: "+strings.Join(tt.sent, ", ")) {
				t.Errorf("result %q does not name the labels", res.Content)
			}
		})
	}
}

// The tool accepts the labels package remote accepts for its jobs, and
// refuses those it refuses.
func TestRemoteLabelsAgreeWithJobs(t *testing.T) {
	var reqs []agenttool.RemoteRequest
	tl := agenttool.New(agenttool.Config{Registry: registry(t), Remote: recordingRemote{&reqs}})
	for _, l := range []string{"gpu", "a.b-c_d", "", " gpu", "gpu,cpu", "ü", strings.Repeat("y", 64), strings.Repeat("y", 65), "x/y"} {
		b, _ := json.Marshal([]string{l})
		res := run(t, tl, `{"description": "d", "prompt": "p", "labels": `+string(b)+`}`)
		jobErr := remote.CheckLabels([]string{l})
		if res.IsError != (jobErr != nil) {
			t.Errorf("label %q: tool error %v (%s), job check %v; want them to agree", l, res.IsError, res.Content, jobErr)
		}
	}
}
