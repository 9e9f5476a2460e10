package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/mcp/mcptest"
)

// runMCP runs troupe with args in cwd and returns stdout and stderr.
func runMCP(t *testing.T, cwd string, env map[string]string, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	home := t.TempDir()
	m := &Main{
		Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut,
		Getenv:  func(k string) string { return env[k] },
		HomeDir: func() (string, error) { return home, nil },
		Getwd:   func() (string, error) { return cwd, nil },
		Now:     time.Now,
		NewID:   func() string { return "session-1" },
		Version: "v0.0.0-test",
	}
	err := m.Run(t.Context(), append([]string{"--home", filepath.Join(home, ".troupe")}, args...))
	return out.String(), errOut.String(), err
}

// mcpScript writes a script that calls tool with input, then answers
// with the tool's result (the scripted model matches want in it).
func mcpScript(t *testing.T, tool, input, want string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "script.json")
	s := `{"turns": [
	  {"match": {"turn": 0}, "reply": {"tool_calls": [{"id": "t1", "name": "` + tool + `", "input": ` + input + `}]}},
	  {"match": {"tool_result": "` + tool + `", "user": ` + jsonString(want) + `}, "reply": {"text": "GOT IT"}},
	  {"match": {}, "reply": {"text": "MISSING"}, "repeat": true}]}`
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func jsonString(s string) string { b, _ := json.Marshal(s); return string(b) }

// stdioConfig returns an --mcp-config value for this test binary as a
// stdio MCP server named name.
func stdioConfig(t *testing.T, name, mode string) string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{name: map[string]any{
		"command": exe, "env": map[string]string{mcptest.Env: mode}}}})
	return string(b)
}

// TestMCPLead: the lead calls a stdio and an HTTP server's tools, allowed
// by the server-wide rule, while a failing server is reported on stderr
// with its stderr tail; a deny rule on one tool refuses it.
func TestMCPLead(t *testing.T) {
	cwd := t.TempDir()
	streamable, _ := mcptest.HTTP(t)
	httpCfg := `{"mcpServers": {"web": {"type": "http", "url": "` + streamable + `", "headers": {"X-Test": "${MCP_TEST_HEADER}"}}}}`
	env := map[string]string{"MCP_TEST_HEADER": "yes"}
	tests := []struct {
		name, tool, input, want string
		extra                   []string
	}{
		{"stdio", "mcp__local__echo", `{"text":"from stdio"}`, "echo: from stdio", []string{"--allowedTools", "mcp__local"}},
		{"http", "mcp__web__echo", `{"text":"from http"}`, "echo: from http", []string{"--allowedTools", "mcp__web__echo"}},
		{"denied", "mcp__local__echo", `{"text":"x"}`, "denied", []string{"--allowedTools", "mcp__local", "--disallowedTools", "mcp__local__echo"}},
		{"not allowed", "mcp__local__media", `{}`, "approval", nil},
		{"resource", "ReadMcpResource", `{"server":"web","uri":"test://hello"}`, "hello, world", []string{"--allowedTools", "ReadMcpResource"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"-p", "--provider", "scripted", "--script", mcpScript(t, tt.tool, tt.input, tt.want),
				"--mcp-config", stdioConfig(t, "local", "ok"), "--mcp-config", httpCfg,
				"--mcp-config", stdioConfig(t, "broken", "fail")}, tt.extra...)
			out, stderr, err := runMCP(t, cwd, env, append(args, "go")...)
			if err != nil {
				t.Fatalf("troupe -p: %v\nstdout: %s\nstderr: %s", err, out, stderr)
			}
			if !strings.Contains(out, "GOT IT") {
				t.Errorf("stdout = %q; want the model to have seen %q\nstderr: %s", out, tt.want, stderr)
			}
			for _, w := range []string{`MCP server "broken"`, "failed to start", "TEST_API_KEY is not set"} {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr = %q; want it to contain %q", stderr, w)
				}
			}
		})
	}
}

// TestMCPProjectApproval: a .mcp.json server runs only once approved in a
// settings file; a malformed .mcp.json is an error naming it.
func TestMCPProjectApproval(t *testing.T) {
	cwd := t.TempDir()
	exe, _ := os.Executable()
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"proj": map[string]any{
		"command": exe, "env": map[string]string{mcptest.Env: "ok"}}}})
	os.WriteFile(filepath.Join(cwd, ".mcp.json"), cfg, 0o600)
	script := mcpScript(t, "mcp__proj__echo", `{"text":"p"}`, "echo: p")
	out, stderr, err := runMCP(t, cwd, nil, "-p", "--script", script, "--allowedTools", "mcp__proj", "go")
	if err != nil || strings.Contains(out, "GOT IT") || !strings.Contains(stderr, "enabledMcpjsonServers") {
		t.Errorf("unapproved: err %v, out %q, stderr %q; want no tool and a warning naming enabledMcpjsonServers", err, out, stderr)
	}
	os.MkdirAll(filepath.Join(cwd, ".claude"), 0o700)
	os.WriteFile(filepath.Join(cwd, ".claude", "settings.local.json"), []byte(`{"enabledMcpjsonServers": ["proj"]}`), 0o600)
	out, stderr, err = runMCP(t, cwd, nil, "-p", "--script", script, "--allowedTools", "mcp__proj", "go")
	if err != nil || !strings.Contains(out, "GOT IT") {
		t.Errorf("approved: err %v, out %q, stderr %q; want the tool called", err, out, stderr)
	}
	if out, _, _ = runMCP(t, cwd, nil, "-p", "--script", script, "--allowedTools", "mcp__proj", "--strict-mcp-config", "go"); strings.Contains(out, "GOT IT") {
		t.Error("--strict-mcp-config: the .mcp.json server was used")
	}
	os.WriteFile(filepath.Join(cwd, ".mcp.json"), []byte(`{"mcpServers": {"bad name!": {"command": "x"}}}`), 0o600)
	if _, _, err := runMCP(t, cwd, nil, "-p", "--script", script, "go"); err == nil || !strings.Contains(err.Error(), ".mcp.json") {
		t.Errorf("malformed .mcp.json: err %v; want an error naming the file", err)
	}
}

// TestMCPCommands: add, list, get and remove, as claude mcp's.
func TestMCPCommands(t *testing.T) {
	cwd := t.TempDir()
	exe, _ := os.Executable()
	home := t.TempDir()
	run := func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		m := &Main{Stdout: &out, Stderr: &errOut, Stdin: strings.NewReader(""),
			Getenv:  func(k string) string { return map[string]string{mcptest.Env: "ok"}[k] },
			HomeDir: func() (string, error) { return home, nil }, Getwd: func() (string, error) { return cwd, nil }}
		err := m.Run(t.Context(), append([]string{"--home", filepath.Join(home, ".troupe")}, args...))
		return out.String() + errOut.String(), err
	}
	if out, err := run("mcp", "add", "-e", mcptest.Env+"=${"+mcptest.Env+"}", "local1", "--", exe, "-test.run=none"); err != nil {
		t.Fatalf("mcp add: %v\n%s", err, out)
	}
	if out, err := run("mcp", "add", "-s", "user", "-t", "http", "-H", "X-Test: yes", "web", "http://127.0.0.1:1/mcp"); err != nil {
		t.Fatalf("mcp add http: %v\n%s", err, out)
	}
	if out, err := run("mcp", "add", "local1", "other"); err == nil || !strings.Contains(err.Error(), "already configured") {
		t.Errorf("mcp add twice: %v %s; want already configured", err, out)
	}
	if out, err := run("mcp", "add", "-t", "ws", "x", "y"); err == nil {
		t.Errorf("mcp add -t ws: accepted\n%s", out)
	}
	local, _ := os.ReadFile(filepath.Join(cwd, ".troupe", "settings.local.json"))
	if !strings.Contains(string(local), `"-test.run=none"`) || !strings.Contains(string(local), "${"+mcptest.Env+"}") {
		t.Errorf("settings.local.json = %s; want the server with its args and unexpanded env", local)
	}
	out, err := run("mcp", "list")
	if err != nil {
		t.Fatalf("mcp list: %v\n%s", err, out)
	}
	if !strings.Contains(out, "local1: ") || !strings.Contains(out, "connected, 5 tools") || !strings.Contains(out, "web: http://127.0.0.1:1/mcp (http) - failed") {
		t.Errorf("mcp list = %q", out)
	}
	if out, err := run("mcp", "get", "local1"); err != nil || !strings.Contains(out, "tool mcp__local1__echo") {
		t.Errorf("mcp get = %v %q", err, out)
	}
	if out, err := run("mcp", "remove", "local1"); err != nil || !strings.Contains(out, "local scope") {
		t.Errorf("mcp remove = %v %q", err, out)
	}
	if out, err := run("mcp", "remove", "local1"); err == nil {
		t.Errorf("mcp remove twice: accepted %q", out)
	}
	if out, err := run("mcp", "get", "local1"); err == nil {
		t.Errorf("mcp get after remove: %q", out)
	}
}
