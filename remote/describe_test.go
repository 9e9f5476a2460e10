package remote_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/remote"
	"github.com/troupe-dev/troupe/task"
)

func TestParseLabels(t *testing.T) {
	got, err := remote.ParseLabels(" gpu, ,linux,")
	if err != nil || strings.Join(got, "|") != "gpu|linux" {
		t.Errorf("ParseLabels = %v, %v; want gpu and linux", got, err)
	}
	if got, err := remote.ParseLabels(""); err != nil || got != nil {
		t.Errorf("ParseLabels(\"\") = %v, %v; want none", got, err)
	}
	if _, err := remote.ParseLabels("gpu,no spaces"); !errors.Is(err, remote.ErrBadJob) || !strings.Contains(err.Error(), `"no spaces"`) {
		t.Errorf("ParseLabels with a bad label = %v; want ErrBadJob naming it", err)
	}
}

func TestDefaultName(t *testing.T) {
	if got := remote.DefaultName("box.example.com", 42); got != "box-example-com-42" {
		t.Errorf("DefaultName = %q", got)
	}
	long := remote.DefaultName(strings.Repeat("h", 100), 123456)
	if len(long) != 64 || !strings.HasSuffix(long, "-123456") || remote.CheckName(long) != nil {
		t.Errorf("DefaultName of a long host = %q (%d); want a valid 64-character name ending in the pid", long, len(long))
	}
}

func TestEventString(t *testing.T) {
	tests := []struct {
		e    remote.Event
		want string
	}{
		{remote.Event{Kind: remote.EventResult, JobID: "r1", Result: &remote.Result{Error: "boom"}}, "job r1 failed: boom"},
		{remote.Event{Kind: remote.EventResult, JobID: "r1", Usage: remote.Usage{TotalTokens: 30, ToolUses: 2}, Result: &remote.Result{}}, "job r1 done (30 tokens, 2 tool uses)"},
		{remote.Event{Kind: remote.EventProgress, JobID: "r1", Attempt: 2, Text: "Reading a.go"}, "job r1 progress (attempt 2) Reading a.go"},
		{remote.Event{Kind: remote.EventResult, JobID: "r1", Attempt: 1}, "job r1 result (attempt 1) "},
	}
	for _, tt := range tests {
		if got := tt.e.String(); got != tt.want {
			t.Errorf("%+v.String() = %q; want %q", tt.e, got, tt.want)
		}
	}
}

// TestStopActive: a lead that ends early stops its running remote
// agents; the job's run sees its context end and the task is killed.
func TestStopActive(t *testing.T) {
	e := newEnv(t, remote.OnLostFail)
	started := make(chan struct{})
	e.worker(t, remote.WorkerConfig{Name: "w1", Run: func(ctx context.Context, j remote.Job, progress func(string, remote.Usage)) remote.Result {
		close(started)
		<-ctx.Done()
		return remote.Result{Error: "stopped"}
	}})
	st := e.submit(t, remote.Request{Prompt: "wait"})
	<-started
	e.client.StopActive(t.Context())
	var status task.Status
	waitFor(t, "the task to end", func() bool {
		for _, s := range e.reg.List() {
			if s.ID == st.ID {
				status = s.Status
			}
		}
		return !status.Active()
	})
	if status != task.Killed {
		t.Errorf("task after StopActive ended %s; want killed", status)
	}
	e.client.StopActive(t.Context()) // nothing active: no effect
}
