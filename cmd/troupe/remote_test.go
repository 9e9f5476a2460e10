package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/troupe-dev/troupe/telemetry"
	"github.com/troupe-dev/troupe/telemetry/telemetrytest"
)

// remoteEnv is the environment of a lead or worker of TestRemoteAgents.
func remoteEnv(url string) map[string]string {
	return map[string]string{"TROUPE_STORE": url, "TROUPE_NATS_TOKEN": "tok", EnvRemoteHeartbeat: "100ms"}
}

func remoteScript(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// leadScript delegates a remote agent and reports what its notification
// said: DONE for a result with WORKER-DONE, LOST for a lost worker.
const leadScript = `{"turns": [
 {"match": {"user": "delegate"}, "reply": {"tool_calls": [{"name": "Agent", "input": {"description": "remote note", "prompt": "write the remote note", "isolation": "remote"}}]}},
 {"match": {"tool_result": "Agent"}, "reply": {"text": "Submitted; waiting for the notification."}},
 {"match": {"user": "WORKER-DONE"}, "reply": {"text": "LEAD-SAW-DONE"}},
 {"match": {"user": "was lost"}, "reply": {"text": "LEAD-SAW-LOST"}}
]}`

// TestRemoteAgents runs troupe serve, a troupe worker with its own home
// and folder, and a troupe -p lead whose Agent call asks for isolation
// remote: the worker writes the file in its folder and the lead gets the
// result in its task notification.
func TestRemoteAgents(t *testing.T) {
	srv := &harness{t: t, home: t.TempDir(), env: map[string]string{}}
	url, stopServer := serveAsync(t, srv, t.TempDir(), "tok")
	defer stopServer()

	// Both processes export spans: the job's run on the worker is the
	// child of its submission on the lead.
	recv := telemetrytest.New(t)
	traced := func(env map[string]string) map[string]string {
		env["OTEL_EXPORTER_OTLP_ENDPOINT"] = recv.URL
		return env
	}
	wcwd := t.TempDir()
	worker := &harness{t: t, home: t.TempDir(), env: traced(remoteEnv(url))}
	wscript := remoteScript(t, `{"turns": [
 {"match": {"user": "write the remote note"}, "reply": {"tool_calls": [{"name": "Write", "input": {"file_path": "note.txt", "content": "written by the worker"}}],
   "usage": {"input_tokens": 200, "output_tokens": 20}}},
 {"match": {"tool_result": "Write"}, "reply": {"text": "WORKER-DONE: wrote note.txt", "usage": {"input_tokens": 100, "output_tokens": 10}}}
]}`)
	wout := newSyncBuffer()
	stopWorker := worker.runAsync(wout, "worker", "--name", "w1", "--cwd", wcwd, "--provider", "scripted", "--script", wscript,
		"--permission-mode", "bypassPermissions")
	wout.waitFor(t, "the worker's start", func(s string) bool { return strings.Contains(s, "worker w1 on") })

	lcwd := t.TempDir()
	lead := &harness{t: t, home: t.TempDir(), env: traced(remoteEnv(url))}
	r := lead.exec("", "-p", "--trust", "--provider", "scripted", "--script", remoteScript(t, leadScript), "--allowedTools", "Agent", "--cwd", lcwd, "--output-format", "stream-json", "delegate the note")
	if r.err != nil {
		t.Fatalf("lead: %v\n%s\n%s\nworker:\n%s", r.err, r.stdout, r.stderr, wout.String())
	}
	if !strings.Contains(r.stdout, "LEAD-SAW-DONE") || !strings.Contains(r.stdout, `"task_type":"remote_agent"`) {
		t.Errorf("the lead did not see the remote result:\n%s\nworker:\n%s", r.stdout, wout.String())
	}
	// The job's spending came back with its result and is the session's:
	// on the result's totals, under <job id>@<worker>.
	lines := streamLines(t, r.stdout)
	byAgent, _ := lines[len(lines)-1]["usage_by_agent"].(map[string]any)
	var job map[string]any
	for name, v := range byAgent {
		if strings.HasPrefix(name, "r") && strings.HasSuffix(name, "@w1") {
			job, _ = v.(map[string]any)
		}
	}
	if job["input_tokens"] != 300.0 || job["output_tokens"] != 30.0 {
		t.Errorf("usage_by_agent = %v; want the remote job's 300 input and 30 output tokens under <job>@w1", byAgent)
	}
	if b, err := os.ReadFile(filepath.Join(wcwd, "note.txt")); err != nil || string(b) != "written by the worker" {
		t.Errorf("worker's note.txt = %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(lcwd, "note.txt")); err == nil {
		t.Error("the note was written in the lead's folder")
	}
	if err := stopWorker(); err != nil {
		t.Errorf("worker ended with %v", err)
	}
	if out := wout.String(); !strings.Contains(out, "done") || !strings.Contains(out, "worker w1 stopped") {
		t.Errorf("worker output:\n%s", out)
	}
	var submit, run telemetrytest.Span
	for _, s := range recv.Spans() {
		switch s.Name {
		case telemetry.SpanSubmit:
			submit = s
		case telemetry.SpanJob:
			run = s
		}
	}
	if submit.SpanID == "" || run.ParentID != submit.SpanID || run.TraceID != submit.TraceID || run.Attrs[telemetry.AttrWorker] != "w1" ||
		run.Attrs[telemetry.AttrJob] != submit.Attrs[telemetry.AttrJob] {
		t.Errorf("remote job spans: submit %+v, run %+v; want the worker's run under the lead's submit", submit, run)
	}

	// Without workers the remote call fails at once with the reason.
	lead2 := &harness{t: t, home: t.TempDir(), env: remoteEnv(url)}
	r = lead2.exec("", "-p", "--trust", "--provider", "scripted", "--script", remoteScript(t, `{"turns": [
 {"match": {"user": "delegate"}, "reply": {"tool_calls": [{"name": "Agent", "input": {"description": "remote note", "prompt": "p", "isolation": "remote"}}]}},
 {"match": {"user": "no worker is registered"}, "reply": {"text": "LEAD-SAW-NO-WORKER"}}
]}`), "--allowedTools", "Agent", "--cwd", lcwd, "delegate")
	if r.err != nil || !strings.Contains(r.stdout, "LEAD-SAW-NO-WORKER") {
		t.Errorf("remote call without workers: %v\n%s\n%s", r.err, r.stdout, r.stderr)
	}
}

// TestRemoteWorkerKilled kills a worker process (SIGKILL) mid-job: with
// the default policy the lead is told its worker was lost and the task
// fails; with TROUPE_REMOTE_ON_LOST=requeue another worker runs the job and
// the lead gets its result.
func TestRemoteWorkerKilled(t *testing.T) {
	bin := builtTroupe(t)
	srv := &harness{t: t, home: t.TempDir(), env: map[string]string{}}
	url, stopServer := serveAsync(t, srv, t.TempDir(), "tok")
	defer stopServer()
	for _, policy := range []string{"fail", "requeue"} {
		t.Run(policy, func(t *testing.T) {
			env := remoteEnv(url)
			env["TROUPE_NATS_NAMESPACE"] = "kill" + policy
			env[EnvRemoteOnLost] = policy
			wscript := remoteScript(t, `{"turns": [
 {"match": {"user": "write the remote note"}, "reply": {"text": "never", "delay_ms": 600000}}
]}`)
			cmd := exec.CommandContext(t.Context(), bin, "worker", "--name", "doomed", "--cwd", t.TempDir(), "--provider", "scripted", "--script", wscript)
			cmd.Env = append(os.Environ(), "TROUPE_HOME="+t.TempDir())
			for k, v := range env {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			wout := newSyncBuffer()
			var werr bytes.Buffer
			cmd.Stdout, cmd.Stderr = wout, &werr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Wait()
			defer cmd.Process.Kill()
			wout.waitFor(t, "the worker's start", func(s string) bool { return strings.Contains(s, "worker doomed on") })

			lead := &harness{t: t, home: t.TempDir(), env: env}
			done := make(chan result, 1)
			go func() {
				done <- lead.exec("", "-p", "--trust", "--provider", "scripted", "--script", remoteScript(t, leadScript), "--allowedTools", "Agent", "--cwd", t.TempDir(), "delegate the note")
			}()
			wout.waitFor(t, "the job's start on the worker", func(s string) bool { return strings.Contains(s, "started") })
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			want := "LEAD-SAW-LOST"
			if policy == "requeue" {
				want = "LEAD-SAW-DONE"
				wcwd := t.TempDir()
				survivor := &harness{t: t, home: t.TempDir(), env: env}
				sout := newSyncBuffer()
				stop := survivor.runAsync(sout, "worker", "--name", "survivor", "--cwd", wcwd, "--provider", "scripted", "--script", remoteScript(t, `{"turns": [
 {"match": {"user": "write the remote note"}, "reply": {"tool_calls": [{"name": "Write", "input": {"file_path": "note.txt", "content": "second try"}}]}},
 {"match": {"tool_result": "Write"}, "reply": {"text": "WORKER-DONE: wrote note.txt"}}
]}`), "--permission-mode", "bypassPermissions")
				defer func() {
					if err := stop(); err != nil {
						t.Errorf("survivor: %v", err)
					}
					if b, err := os.ReadFile(filepath.Join(wcwd, "note.txt")); err != nil || string(b) != "second try" {
						t.Errorf("survivor's note.txt = %q, %v\n%s", b, err, sout.String())
					}
				}()
			}
			r := <-done
			if r.err != nil || !strings.Contains(r.stdout, want) {
				t.Fatalf("lead after its worker was killed: %v, want %s\n%s\n%s\nworker:\n%s%s", r.err, want, r.stdout, r.stderr, wout.String(), werr.String())
			}
		})
	}
}

// TestWorkerUsage checks that bad worker settings are usage errors naming
// the problem, before anything connects.
func TestWorkerUsage(t *testing.T) {
	h := &harness{t: t, home: t.TempDir(), env: map[string]string{}}
	script := remoteScript(t, `{"turns": [{"match": {}, "reply": {"text": "x"}}]}`)
	base := []string{"worker", "--provider", "scripted", "--script", script}
	for _, tt := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{nil, nil, "needs a NATS store"},
		{map[string]string{"TROUPE_STORE": "nats://127.0.0.1:1"}, []string{"--capacity", "0"}, "--capacity 0"},
		{map[string]string{"TROUPE_STORE": "nats://127.0.0.1:1"}, []string{"--labels", "gpu,bad label"}, `label "bad label"`},
		{map[string]string{"TROUPE_STORE": "nats://127.0.0.1:1", EnvRemoteHeartbeat: "soon"}, nil, EnvRemoteHeartbeat},
		{map[string]string{"TROUPE_STORE": "nats://127.0.0.1:1"}, []string{"--name", "a b"}, `worker name "a b"`},
	} {
		h.env = tt.env
		err := h.fail(append(append([]string{}, base...), tt.args...)...)
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("worker %v with %v: %v; want an error containing %q", tt.args, tt.env, err, tt.want)
		}
	}
}

// TestInterruptedLeadStopsRemoteAgent interrupts a lead while its remote
// agent runs: the worker is told, cancels the agent and reports it stopped.
func TestInterruptedLeadStopsRemoteAgent(t *testing.T) {
	srv := &harness{t: t, home: t.TempDir(), env: map[string]string{}}
	url, stopServer := serveAsync(t, srv, t.TempDir(), "tok")
	defer stopServer()
	worker := &harness{t: t, home: t.TempDir(), env: remoteEnv(url)}
	wout := newSyncBuffer()
	stopWorker := worker.runAsync(wout, "worker", "--name", "w1", "--cwd", t.TempDir(), "--provider", "scripted", "--script", remoteScript(t, `{"turns": [
 {"match": {"user": "write the remote note"}, "reply": {"text": "never", "delay_ms": 600000}}
]}`), "--requeue") // a failing test still stops the worker's job
	defer stopWorker()
	wout.waitFor(t, "the worker's start", func(s string) bool { return strings.Contains(s, "worker w1 on") })

	lead := &harness{t: t, home: t.TempDir(), env: remoteEnv(url)}
	lout := newSyncBuffer()
	stopLead := lead.runAsync(lout, "-p", "--trust", "--provider", "scripted", "--script", remoteScript(t, leadScript), "--allowedTools", "Agent", "--cwd", t.TempDir(), "delegate the note")
	wout.waitFor(t, "the job's start on the worker", func(s string) bool { return strings.Contains(s, "started") })
	stopLead() // as Ctrl-C does
	wout.waitFor(t, "the worker's report of the stop", func(s string) bool { return strings.Contains(s, "stopped by the lead") })
}
