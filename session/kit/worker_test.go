package kit_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/remote"
	"github.com/troupe-dev/troupe/remote/remotetest"
	"github.com/troupe-dev/troupe/session/kit"
)

// TestRemoteWorker registers a worker on an in-memory queue, says so,
// and stops saying so when ctx ends; a bad name starts nothing.
func TestRemoteWorker(t *testing.T) {
	mem := remotetest.New(time.Second, time.Second)
	var said bytes.Buffer
	bad := kit.RemoteWorker{Name: "no spaces", Capacity: 1, Queue: mem.Conn(), Say: kit.Sayer(&said, nil)}
	if err := bad.Run(t.Context()); err == nil || !strings.Contains(err.Error(), `"no spaces"`) || said.Len() != 0 {
		t.Errorf("Run with a bad name = %v, said %q; want an error naming it, nothing said", err, said.String())
	}

	var out bytes.Buffer
	w := kit.RemoteWorker{Name: "w1", Labels: []string{"gpu"}, Capacity: 2, Heartbeat: 20 * time.Millisecond, Queue: mem.Conn(), Where: "nats://x",
		Jobs: kit.RemoteJobs{Cwd: "/work"}, Say: kit.Sayer(&out, func() time.Time { return time.Date(2026, 12, 3, 9, 0, 1, 0, time.UTC) })}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	probe := mem.Conn()
	deadline := time.Now().Add(10 * time.Second)
	for ok := false; !ok; ok, _ = remote.Alive(t.Context(), probe, "w1") {
		if time.Now().After(deadline) {
			t.Fatal("worker w1 never registered")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run after ctx ended = %v", err)
	}
	want := "09:00:01 worker w1 on nats://x: labels [gpu], capacity 2, folder /work\n09:00:01 worker w1 stopped\n"
	if out.String() != want {
		t.Errorf("said:\n%s\nwant:\n%s", out.String(), want)
	}
}
