package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/session/record"
)

// TestResumeRemoteJobs runs a lead whose two remote agents end, then
// makes its record look as if the lead had been killed before it saw the
// second one end, and adds a job the store never held. The lead resumed
// with --continue is told of the ended job with its result, takes the
// second up again (the store still holds its events: its result comes as
// a notification) and reports the third unknown; the record then holds
// the second's end.
func TestResumeRemoteJobs(t *testing.T) {
	srv := &harness{t: t, home: t.TempDir(), env: map[string]string{}}
	url, stopServer := serveAsync(t, srv, t.TempDir(), "tok")
	defer stopServer()
	worker := &harness{t: t, home: t.TempDir(), env: remoteEnv(url)}
	wout := newSyncBuffer()
	stopWorker := worker.runAsync(wout, "worker", "--name", "w1", "--labels", "gpu", "--cwd", t.TempDir(), "--provider", "scripted", "--script", remoteScript(t, `{"turns": [
 {"match": {"user": "the first note"}, "reply": {"text": "WORKER-DONE first"}},
 {"match": {"user": "the second note"}, "reply": {"text": "WORKER-DONE second"}}
]}`))
	defer stopWorker()
	wout.waitFor(t, "the worker's start", func(s string) bool { return strings.Contains(s, "worker w1 on") })

	cwd := t.TempDir()
	lead := &harness{t: t, home: t.TempDir(), env: remoteEnv(url)}
	r := lead.exec("", "-p", "--trust", "--provider", "scripted", "--script", remoteScript(t, `{"turns": [
 {"match": {"user": "delegate"}, "reply": {"tool_calls": [
   {"name": "Agent", "input": {"description": "first note", "prompt": "write the first note", "labels": ["gpu"]}},
   {"name": "Agent", "input": {"description": "second note", "prompt": "write the second note", "isolation": "remote"}}]}},
 {"match": {"tool_result": "Agent"}, "reply": {"text": "Submitted."}},
 {"match": {"user": "WORKER-DONE"}, "reply": {"text": "Noted."}, "repeat": true}
]}`), "--allowedTools", "Agent", "--cwd", cwd, "delegate the notes")
	if r.err != nil {
		t.Fatalf("first run: %v\n%s\n%s", r.err, r.stdout, r.stderr)
	}
	paths, _ := filepath.Glob(filepath.Join(lead.home, "sessions", "*.jsonl"))
	if len(paths) != 1 {
		t.Fatalf("session records %v; want one", paths)
	}
	f, err := record.Load(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Remote) != 2 || f.Remote[0].Status != "completed" || f.Remote[1].Status != "completed" || f.Remote[0].Worker != "w1" ||
		f.Remote[0].Labels[0] != "gpu" || !strings.Contains(f.Remote[0].Summary+f.Remote[1].Summary, "WORKER-DONE first") {
		t.Fatalf("recorded remote jobs %+v; want both submitted, started on w1 and completed", f.Remote)
	}
	second := f.Remote[1]
	if second.Summary != "WORKER-DONE second" {
		second = f.Remote[0]
	}
	// The lead "was killed" before it saw the second job end; a third
	// job's events are gone from the store.
	b, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	var kept [][]byte
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		var l record.Line
		if json.Unmarshal(line, &l) == nil && l.Remote != nil && l.Remote.ID == second.ID && l.Remote.Event == record.RemoteEnded {
			continue
		}
		kept = append(kept, line)
	}
	kept = append(kept, []byte(`{"type":"remote","remote":{"event":"submitted","id":"r0000gone","description":"lost one","max_attempts":1}}`+"\n"))
	if err := os.WriteFile(paths[0], bytes.Join(kept, nil), 0o600); err != nil {
		t.Fatal(err)
	}

	r = lead.exec("", "-p", "--trust", "--continue", "--provider", "scripted", "--script", remoteScript(t, `{"turns": [
 {"match": {"user": "<result>WORKER-DONE second"}, "reply": {"text": "LEAD-SAW-REATTACHED"}},
 {"match": {"user": "This session was resumed"}, "reply": {"text": "LEAD-SAW-NOTE"}}
]}`), "--allowedTools", "Agent", "--cwd", cwd, "what became of the notes?")
	if r.err != nil || !strings.Contains(r.stdout, "LEAD-SAW-REATTACHED") {
		t.Fatalf("resumed run: %v\n%s\n%s", r.err, r.stdout, r.stderr)
	}
	f, err = record.Load(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	var note string
	for _, m := range f.Messages {
		if s := m.Text(); strings.Contains(s, "This session was resumed") {
			note = s
		}
	}
	first := f.Remote[0]
	if first.ID == second.ID {
		first = f.Remote[1]
	}
	for _, want := range []string{
		first.ID + ` "first note" (labels gpu) on worker w1: completed: WORKER-DONE first`,
		second.ID + ` "second note" on worker w1: no end recorded; re-attached`,
		`r0000gone "lost one": no end recorded; unknown: the store holds no event of it`,
	} {
		if !strings.Contains(note, want) {
			t.Errorf("the resumed lead's note lacks %q:\n%s", want, note)
		}
	}
	if len(f.Remote) != 3 {
		t.Fatalf("recorded jobs after the resume: %+v", f.Remote)
	}
	for _, j := range f.Remote {
		if j.ID == second.ID && (j.Status != "completed" || j.Summary != "WORKER-DONE second") {
			t.Errorf("the re-attached job's end was not recorded: %+v", j)
		}
	}
}

// TestResumeAfterLeadKilled kills a lead process (SIGKILL) while its
// remote agent runs on a worker: the record holds the job's submission
// and start but no end. The lead resumed with --continue re-attaches the
// job, which is still running, and gets its result when it ends.
func TestResumeAfterLeadKilled(t *testing.T) {
	bin := builtTroupe(t)
	srv := &harness{t: t, home: t.TempDir(), env: map[string]string{}}
	url, stopServer := serveAsync(t, srv, t.TempDir(), "tok")
	defer stopServer()
	worker := &harness{t: t, home: t.TempDir(), env: remoteEnv(url)}
	wout := newSyncBuffer()
	release := filepath.Join(t.TempDir(), "release")
	stopWorker := worker.runAsync(wout, "worker", "--name", "w1", "--cwd", t.TempDir(), "--provider", "scripted", "--script", remoteScript(t, `{"turns": [
 {"match": {"user": "the long note"}, "reply": {"tool_calls": [{"name": "Bash", "input": {"command": "while [ ! -e `+release+` ]; do sleep 0.05; done; echo released"}}]}},
 {"match": {"tool_result": "Bash"}, "reply": {"text": "WORKER-DONE long"}}
]}`), "--permission-mode", "bypassPermissions")
	defer stopWorker()
	wout.waitFor(t, "the worker's start", func(s string) bool { return strings.Contains(s, "worker w1 on") })

	home, cwd := t.TempDir(), t.TempDir()
	cmd := exec.CommandContext(t.Context(), bin, "--home", home, "-p", "--trust", "--provider", "scripted", "--script", remoteScript(t, `{"turns": [
 {"match": {"user": "delegate"}, "reply": {"tool_calls": [{"name": "Agent", "input": {"description": "long note", "prompt": "write the long note", "isolation": "remote"}}]}},
 {"match": {"tool_result": "Agent"}, "reply": {"text": "Submitted."}}
]}`), "--allowedTools", "Agent", "--cwd", cwd, "delegate the long note")
	cmd.Env = os.Environ()
	for k, v := range remoteEnv(url) {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var lout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &lout, &lout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	wout.waitFor(t, "the job's start on the worker", func(s string) bool { return strings.Contains(s, "started") })
	// The record says the job started before the lead dies.
	var path string
	deadline := time.Now().Add(20 * time.Second)
	for {
		paths, _ := filepath.Glob(filepath.Join(home, "sessions", "*.jsonl"))
		if len(paths) == 1 {
			if b, _ := os.ReadFile(paths[0]); bytes.Contains(b, []byte(`"event":"started"`)) {
				path = paths[0]
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the lead's record never said the job started; lead output:\n%s", lout.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	lead := &harness{t: t, home: home, env: remoteEnv(url)}
	done := make(chan result, 1)
	go func() {
		done <- lead.exec("", "-p", "--trust", "--continue", "--provider", "scripted", "--script", remoteScript(t, `{"turns": [
 {"match": {"user": "<result>WORKER-DONE long"}, "reply": {"text": "LEAD-SAW-REATTACHED"}},
 {"match": {"user": "This session was resumed"}, "reply": {"text": "Waiting for the re-attached agent."}}
]}`), "--allowedTools", "Agent", "--cwd", cwd, "--output-format", "stream-json", "how is the long note going?")
	}()
	// The resumed lead waits for the re-attached job, still running.
	deadline = time.Now().Add(20 * time.Second)
	for {
		if b, _ := os.ReadFile(path); bytes.Contains(b, []byte("Waiting for the re-attached agent.")) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the resumed lead did not answer the note")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || !strings.Contains(r.stdout, "LEAD-SAW-REATTACHED") {
		t.Fatalf("resumed lead: %v\n%s\n%s\nworker:\n%s", r.err, r.stdout, r.stderr, wout.String())
	}
	if !strings.Contains(r.stdout, "on worker w1: no end recorded; re-attached") {
		t.Errorf("the resumed lead's note does not say the job was re-attached:\n%s", r.stdout)
	}
	f, err := record.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Remote) != 1 || f.Remote[0].Status != "completed" || f.Remote[0].Summary != "WORKER-DONE long" {
		t.Errorf("recorded jobs after the resume: %+v", f.Remote)
	}
}
