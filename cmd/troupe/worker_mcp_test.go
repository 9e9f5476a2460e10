package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/troupe-dev/troupe/mcp/mcptest"
)

// TestRemoteWorkerMCP: a worker starts the MCP servers of its own host's
// configuration (.mcp.json in its folder, approved in its settings), and
// the agent of a remote job calls their tools; the lead has no MCP server
// at all.
func TestRemoteWorkerMCP(t *testing.T) {
	srv := &harness{t: t, home: t.TempDir(), env: map[string]string{}}
	url, stopServer := serveAsync(t, srv, t.TempDir(), "tok")
	defer stopServer()

	wcwd := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"hosttools": map[string]any{"command": exe, "env": map[string]string{mcptest.Env: "ok", "GORACE": "atexit_sleep_ms=0"}},
		"broken":    map[string]any{"command": exe, "env": map[string]string{mcptest.Env: "fail", "GORACE": "atexit_sleep_ms=0"}}}})
	os.WriteFile(filepath.Join(wcwd, ".mcp.json"), cfg, 0o600)
	os.MkdirAll(filepath.Join(wcwd, ".claude"), 0o700)
	os.WriteFile(filepath.Join(wcwd, ".claude", "settings.local.json"), []byte(`{"enabledMcpjsonServers": ["hosttools", "broken"]}`), 0o600)

	worker := &harness{t: t, home: t.TempDir(), env: remoteEnv(url)}
	wscript := remoteScript(t, `{"turns": [
 {"match": {"user": "write the remote note"}, "reply": {"tool_calls": [{"name": "mcp__hosttools__echo", "input": {"text": "from the worker's host"}}]}},
 {"match": {"tool_result": "mcp__hosttools__echo", "user": "echo: from the worker's host"}, "reply": {"text": "WORKER-DONE: the host's MCP tool answered"}},
 {"match": {}, "reply": {"text": "WORKER-MISSED"}, "repeat": true}
]}`)
	wout := newSyncBuffer()
	stopWorker := sync.OnceValue(worker.runAsync(wout, "worker", "--name", "w-mcp", "--cwd", wcwd, "--provider", "scripted", "--script", wscript,
		"--allowedTools", "mcp__hosttools"))
	defer stopWorker()
	started := wout.waitFor(t, "the worker's start", func(s string) bool { return strings.Contains(s, "worker w-mcp on") })
	for _, want := range []string{"MCP server hosttools:", "connected, 5 tools", "MCP server broken:", "failed"} {
		if !strings.Contains(started, want) {
			t.Errorf("worker output lacks %q:\n%s", want, started)
		}
	}

	lead := &harness{t: t, home: t.TempDir(), env: remoteEnv(url)}
	r := lead.exec("", "-p", "--trust", "--provider", "scripted", "--script", remoteScript(t, leadScript), "--allowedTools", "Agent",
		"--cwd", t.TempDir(), "--strict-mcp-config", "delegate the note")
	if r.err != nil || !strings.Contains(r.stdout, "LEAD-SAW-DONE") {
		t.Fatalf("lead: %v\n%s\n%s\nworker:\n%s", r.err, r.stdout, r.stderr, wout.String())
	}
	if err := stopWorker(); err != nil {
		t.Errorf("worker ended with %v", err)
	}
}
