package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRemoteAgentLabels runs troupe serve, two troupe workers (one with
// the label gpu) and a lead whose Agent calls carry labels: the call
// asking for gpu runs on the gpu worker, the lead's own labels
// (TROUPE_REMOTE_LABELS) joined to the call's; a malformed label and a
// label no worker has are refused to the model, naming them.
func TestRemoteAgentLabels(t *testing.T) {
	srv := &harness{t: t, home: t.TempDir(), env: map[string]string{}}
	url, stopServer := serveAsync(t, srv, t.TempDir(), "tok")
	defer stopServer()

	workerScript := func(name string) string {
		return remoteScript(t, `{"turns": [
 {"match": {"user": "write the remote note"}, "reply": {"tool_calls": [{"name": "Write", "input": {"file_path": "note.txt", "content": "written on `+name+`"}}]}},
 {"match": {"tool_result": "Write"}, "reply": {"text": "`+name+`-DONE"}}
]}`)
	}
	cwds := map[string]string{}
	for _, w := range []struct{ name, labels string }{{"cpu", "linux"}, {"gpu", "linux,gpu"}} {
		cwds[w.name] = t.TempDir()
		h := &harness{t: t, home: t.TempDir(), env: remoteEnv(url)}
		out := newSyncBuffer()
		stop := h.runAsync(out, "worker", "--name", w.name, "--labels", w.labels, "--cwd", cwds[w.name], "--provider", "scripted",
			"--script", workerScript(w.name), "--permission-mode", "bypassPermissions")
		defer stop()
		out.waitFor(t, "worker "+w.name+"'s start", func(s string) bool { return strings.Contains(s, "worker "+w.name+" on") })
	}

	env := remoteEnv(url)
	env[EnvRemoteLabels] = "linux"
	lead := &harness{t: t, home: t.TempDir(), env: env}
	r := lead.exec("", "-p", "--trust", "--provider", "scripted", "--script", remoteScript(t, `{"turns": [
 {"match": {"user": "delegate"}, "reply": {"tool_calls": [
   {"name": "Agent", "input": {"description": "gpu note", "prompt": "write the remote note", "labels": ["gpu"]}},
   {"name": "Agent", "input": {"description": "bad", "prompt": "p", "isolation": "remote", "labels": ["big box"]}},
   {"name": "Agent", "input": {"description": "tpu", "prompt": "p", "labels": ["tpu"]}}]}},
 {"match": {"tool_result": "Agent"}, "reply": {"text": "Submitted; waiting for the notification."}},
 {"match": {"user": "gpu-DONE"}, "reply": {"text": "LEAD-SAW-GPU"}},
 {"match": {"user": "cpu-DONE"}, "reply": {"text": "LEAD-SAW-CPU"}}
]}`), "--allowedTools", "Agent", "--cwd", t.TempDir(), "--output-format", "stream-json", "delegate the note")
	if r.err != nil {
		t.Fatalf("lead: %v\n%s\n%s", r.err, r.stdout, r.stderr)
	}
	for _, want := range []string{
		"LEAD-SAW-GPU",
		"Remote agent submitted (labels: gpu)",
		`labels[0] \"big box\": a label is letters`,
		`no live worker has the labels [\"linux\" \"tpu\"]`,
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the lead's output lacks %q:\n%s", want, r.stdout)
		}
	}
	if b, err := os.ReadFile(filepath.Join(cwds["gpu"], "note.txt")); err != nil || string(b) != "written on gpu" {
		t.Errorf("gpu worker's note.txt = %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(cwds["cpu"], "note.txt")); err == nil {
		t.Error("the job asking for gpu ran on the worker without it")
	}
}
