package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCoordinatorRemoteWorkers runs troupe serve, a troupe worker with
// the label gpu and a coordinator-mode lead (scripted) on the same store:
// the coordinator is told of remote workers, starts one worker on the
// remote host (labels) and one here in the same message, and both
// results come back as task notifications; the remote one ran in the
// worker's folder.
func TestCoordinatorRemoteWorkers(t *testing.T) {
	srv := &harness{t: t, home: t.TempDir(), env: map[string]string{}}
	url, stopServer := serveAsync(t, srv, t.TempDir(), "tok")
	defer stopServer()
	wcwd := t.TempDir()
	worker := &harness{t: t, home: t.TempDir(), env: remoteEnv(url)}
	wout := newSyncBuffer()
	stopWorker := worker.runAsync(wout, "worker", "--name", "gpu1", "--labels", "gpu", "--cwd", wcwd, "--provider", "scripted", "--script", remoteScript(t, `{"turns": [
 {"match": {"user": "measure on the gpu"}, "reply": {"tool_calls": [{"name": "Write", "input": {"file_path": "gpu.txt", "content": "measured"}}]}},
 {"match": {"tool_result": "Write"}, "reply": {"text": "REMOTE-DONE: 42 ms"}}
]}`), "--permission-mode", "bypassPermissions")
	defer stopWorker()
	wout.waitFor(t, "the worker's start", func(s string) bool { return strings.Contains(s, "worker gpu1 on") })

	lcwd := t.TempDir()
	lead := &harness{t: t, home: t.TempDir(), env: remoteEnv(url)}
	r := lead.exec("", "-p", "--trust", "--coordinator", "--provider", "scripted", "--script", remoteScript(t, `{"turns": [
 {"match": {"system": "Remote workers: a worker can run on another machine", "user": "benchmark"}, "reply": {"tool_calls": [
   {"name": "Agent", "input": {"description": "gpu benchmark", "prompt": "measure on the gpu", "labels": ["gpu"]}},
   {"name": "Agent", "input": {"description": "local notes", "prompt": "summarise the local notes"}}]}},
 {"match": {"system": "running as a coordinator", "tool_result": "Agent"}, "reply": {"text": "Two workers launched."}},
 {"match": {"system": "working for a coordinator", "user": "summarise the local notes"}, "reply": {"text": "LOCAL-DONE"}},
 {"match": {"system": "running as a coordinator", "user": "REMOTE-DONE: 42 ms"}, "reply": {"text": "COORD-SAW-REMOTE"}},
 {"match": {"system": "running as a coordinator", "user": "LOCAL-DONE"}, "reply": {"text": "COORD-SAW-LOCAL"}}
]}`), "--cwd", lcwd, "--output-format", "stream-json", "benchmark the kernel")
	if r.err != nil {
		t.Fatalf("coordinator: %v\n%s\n%s\nworker:\n%s", r.err, r.stdout, r.stderr, wout.String())
	}
	for _, want := range []string{"COORD-SAW-REMOTE", "Remote agent submitted (labels: gpu)", `"task_type":"remote_agent"`, `"task_type":"local_agent"`} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the coordinator's output lacks %q:\n%s\nworker:\n%s", want, r.stdout, wout.String())
		}
	}
	if b, err := os.ReadFile(filepath.Join(wcwd, "gpu.txt")); err != nil || string(b) != "measured" {
		t.Errorf("remote worker's gpu.txt = %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(lcwd, "gpu.txt")); err == nil {
		t.Error("the remote worker's file was written in the coordinator's folder")
	}
}
