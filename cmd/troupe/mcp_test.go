package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/cli"
	"github.com/troupe-dev/troupe/cli/mcpcmd"

	"github.com/troupe-dev/troupe/llm/llmtest"
	"github.com/troupe-dev/troupe/mcp"
	"github.com/troupe-dev/troupe/mcp/mcptest"
	"github.com/troupe-dev/troupe/tool"
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
		"command": exe, "env": map[string]string{mcptest.Env: mode, "GORACE": "atexit_sleep_ms=0"}}}})
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
			args := append([]string{"-p", "--trust", "--provider", "scripted", "--script", mcpScript(t, tt.tool, tt.input, tt.want),
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
		"command": exe, "env": map[string]string{mcptest.Env: "ok", "GORACE": "atexit_sleep_ms=0"}}}})
	os.WriteFile(filepath.Join(cwd, ".mcp.json"), cfg, 0o600)
	script := mcpScript(t, "mcp__proj__echo", `{"text":"p"}`, "echo: p")
	out, stderr, err := runMCP(t, cwd, nil, "-p", "--trust", "--script", script, "--allowedTools", "mcp__proj", "go")
	if err != nil || strings.Contains(out, "GOT IT") || !strings.Contains(stderr, "enabledMcpjsonServers") {
		t.Errorf("unapproved: err %v, out %q, stderr %q; want no tool and a warning naming enabledMcpjsonServers", err, out, stderr)
	}
	os.MkdirAll(filepath.Join(cwd, ".claude"), 0o700)
	os.WriteFile(filepath.Join(cwd, ".claude", "settings.local.json"), []byte(`{"enabledMcpjsonServers": ["proj"]}`), 0o600)
	out, stderr, err = runMCP(t, cwd, nil, "-p", "--trust", "--script", script, "--allowedTools", "mcp__proj", "go")
	if err != nil || !strings.Contains(out, "GOT IT") {
		t.Errorf("approved: err %v, out %q, stderr %q; want the tool called", err, out, stderr)
	}
	if out, _, _ = runMCP(t, cwd, nil, "-p", "--trust", "--script", script, "--allowedTools", "mcp__proj", "--strict-mcp-config", "go"); strings.Contains(out, "GOT IT") {
		t.Error("--strict-mcp-config: the .mcp.json server was used")
	}
	// A server of the project's file that cannot be read is left out with
	// a warning naming the file and the server; the session still runs.
	os.WriteFile(filepath.Join(cwd, ".mcp.json"), []byte(`{"mcpServers": {"bad name!": {"command": "x"}}}`), 0o600)
	if _, stderr, err := runMCP(t, cwd, nil, "-p", "--trust", "--script", script, "go"); err != nil || !strings.Contains(stderr, ".mcp.json") || !strings.Contains(stderr, "bad name!") {
		t.Errorf("malformed .mcp.json: err %v, stderr %q; want the run, and a warning naming the file and the server", err, stderr)
	}
}

// TestMCPCommands: add, list, get and remove, as claude mcp's.
func TestMCPCommands(t *testing.T) {
	cwd := t.TempDir()
	exe, _ := os.Executable()
	home := t.TempDir()
	trustTemp(t, filepath.Join(home, ".troupe")) // main_test.go: the local server starts in a trusted folder
	run := func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		m := &Main{Stdout: &out, Stderr: &errOut, Stdin: strings.NewReader(""),
			Getenv:  func(k string) string { return map[string]string{mcptest.Env: "ok"}[k] },
			HomeDir: func() (string, error) { return home, nil }, Getwd: func() (string, error) { return cwd, nil }}
		err := m.Run(t.Context(), append([]string{"--home", filepath.Join(home, ".troupe")}, args...))
		return out.String() + errOut.String(), err
	}
	if out, err := run("mcp", "add", "-e", mcptest.Env+"=${"+mcptest.Env+"}", "-e", "GORACE=atexit_sleep_ms=0", "local1", "--", exe, "-test.run=none"); err != nil {
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

// TestMCPServeTeammate: an MCP client (troupe's own, on the go-sdk)
// attached through troupe mcp serve joins a team, on the file store and
// on NATS, reads the lead's message, claims and completes a task,
// answers, goes idle, and leaves the team by approving a shutdown request.
func TestMCPServeTeammate(t *testing.T) {
	t.Run("file", func(t *testing.T) {
		h := &harness{t: t, home: t.TempDir(), openStore: cli.OpenFileStore, env: map[string]string{}}
		serveTeammate(t, h, nil)
	})
	t.Run("nats", func(t *testing.T) {
		h := &harness{t: t, home: t.TempDir(), env: map[string]string{"TROUPE_NATS_TOKEN": "tok"},
			openStore: func(string) (Stores, error) {
				t.Error("the file store was opened although $TROUPE_STORE names a NATS server")
				return cli.OpenFileStore(t.TempDir())
			}}
		url, stop := serveAsync(t, h, t.TempDir(), "tok")
		defer stop()
		h.env["TROUPE_STORE"] = url
		serveTeammate(t, h, map[string]string{"TROUPE_STORE": url, "TROUPE_NATS_TOKEN": "tok"})
	})
}

func serveTeammate(t *testing.T, h *harness, env map[string]string) {
	h.ok("team", "create", "crew")
	h.ok("task", "create", "--team", "crew", "--subject", "write the report")
	srvEnv := map[string]string{asTroupeEnv: "1", "GORACE": "atexit_sleep_ms=0"}
	for k, v := range env {
		srvEnv[k] = v
	}
	m := mcp.Start(t.Context(), []mcp.Server{{Name: "team", Command: os.Args[0], Args: []string{"--home", h.home, "mcp", "serve", "--team", "crew", "--agent", "codex"},
		Env: srvEnv}}, mcp.Options{StartTimeout: 20 * time.Second})
	defer m.Close()
	if st := m.Status()[0]; st.State != mcp.StateConnected {
		t.Fatalf("mcp serve: %v", st.Err)
	}
	if out := h.ok("team", "show", "crew"); !strings.Contains(out, "codex") || !strings.Contains(out, "mcp") {
		t.Errorf("team show after connecting = %q; want codex with backend mcp", out)
	}
	tools := m.Tools()
	h.ok("inbox", "send", "--team", "crew", "--to", "codex", "--from", "team-lead", "please take task 1")
	if res := call(t, tools, "mcp__team__WaitForWork", `{"timeout_seconds": 5}`); !strings.Contains(res.Content, "please take task 1") {
		t.Errorf("WaitForWork = %+v; want the lead's message", res)
	}
	if res := call(t, tools, "mcp__team__TaskUpdate", `{"taskId":"1","owner":"codex","status":"in_progress"}`); res.IsError {
		t.Errorf("claim = %+v", res)
	}
	if res := call(t, tools, "mcp__team__TaskUpdate", `{"taskId":"1","status":"completed"}`); res.IsError {
		t.Errorf("complete = %+v", res)
	}
	if res := call(t, tools, "mcp__team__SendMessage", `{"to":"team-lead","message":"report written","summary":"done"}`); res.IsError {
		t.Errorf("SendMessage = %+v", res)
	}
	if res := call(t, tools, "mcp__team__WaitForWork", `{"timeout_seconds": 1}`); res.IsError || !strings.Contains(res.Content, "Nothing arrived") {
		t.Errorf("WaitForWork with nothing to do = %+v", res)
	}
	lead := h.ok("inbox", "read", "--team", "crew", "--agent", "team-lead")
	if !strings.Contains(lead, "report written") || !strings.Contains(lead, "idle_notification") {
		t.Errorf("lead's inbox = %q; want the report and an idle notification", lead)
	}
	if out := h.ok("task", "get", "--team", "crew", "1"); !strings.Contains(out, "completed") || !strings.Contains(out, "codex") {
		t.Errorf("task 1 = %q; want completed by codex", out)
	}
	h.ok("inbox", "send", "--team", "crew", "--to", "codex", "--from", "team-lead", `{"type":"shutdown_request","requestId":"shutdown-1@codex","from":"team-lead","reason":"done"}`)
	if res := call(t, tools, "mcp__team__ReadInbox", `{}`); !strings.Contains(res.Content, "shutdown_request") {
		t.Errorf("ReadInbox = %+v; want the shutdown request", res)
	}
	if res := call(t, tools, "mcp__team__SendMessage", `{"to":"team-lead","message":{"type":"shutdown_response","request_id":"shutdown-1@codex","approve":true}}`); res.IsError {
		t.Errorf("approve shutdown = %+v", res)
	}
	deadline := time.Now().Add(10 * time.Second)
	for strings.Contains(h.ok("team", "show", "crew"), "codex") {
		if time.Now().After(deadline) {
			t.Fatal("codex is still a member 10s after approving its shutdown")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestMCPSubAgent: a sub-agent started with the Agent tool calls the
// lead's MCP server.
func TestMCPSubAgent(t *testing.T) {
	cwd := t.TempDir()
	script := filepath.Join(t.TempDir(), "script.json")
	os.WriteFile(script, []byte(`{"turns": [
	  {"match": {"tool_result": "mcp__local__echo", "user": "echo: from sub"}, "reply": {"text": "sub done"}},
	  {"match": {"tool_result": "Agent", "user": "sub done"}, "reply": {"text": "GOT IT"}},
	  {"match": {"user": "call echo please"}, "reply": {"tool_calls": [{"id": "s1", "name": "mcp__local__echo", "input": {"text": "from sub"}}]}},
	  {"match": {"turn": 0}, "reply": {"tool_calls": [{"id": "l1", "name": "Agent", "input": {"description": "echo", "prompt": "call echo please", "subagent_type": "general-purpose"}}]}},
	  {"match": {}, "reply": {"text": "MISSING"}, "repeat": true}]}`), 0o600)
	out, stderr, err := runMCP(t, cwd, nil, "-p", "--trust", "--script", script, "--mcp-config", stdioConfig(t, "local", "ok"),
		"--allowedTools", "mcp__local Agent", "go")
	if err != nil || !strings.Contains(out, "GOT IT") {
		t.Errorf("troupe -p: %v\nstdout: %s\nstderr: %s", err, out, stderr)
	}
}

func call(t *testing.T, tools []tool.Tool, name, input string) tool.Result {
	t.Helper()
	for _, tl := range tools {
		if tl.Spec().Name == name {
			res, err := tl.Run(t.Context(), tool.Call{ID: "1", Name: name, Input: json.RawMessage(input)})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return res
		}
	}
	t.Fatalf("no tool %s", name)
	return tool.Result{}
}

// TestMCPPaneArgv: a pane teammate gets the lead's --mcp-config files
// (made absolute) and --strict-mcp-config on its command line, its inline
// JSON configurations (which may hold tokens) in $TROUPE_MCP_CONFIGS, not
// on the command line, and the MCP timeouts; a teammate reads the
// variable after its flags.
func TestMCPPaneArgv(t *testing.T) {
	a := newApp(Main{Getenv: func(k string) string { return map[string]string{"MCP_TIMEOUT": "5000"}[k] }})
	inline := `{"mcpServers": {"s": {"type": "http", "url": "http://x/", "headers": {"Authorization": "Bearer tok-123"}}}}`
	a.mcp.configs, a.mcp.strict = []string{"servers.json", inline}, true
	env := map[string]string{}
	argv := a.withMCP([]string{"troupe"}, env)
	abs, _ := filepath.Abs("servers.json")
	want := []string{"troupe", "--mcp-config", abs, "--strict-mcp-config"}
	if strings.Join(argv, "\x00") != strings.Join(want, "\x00") || env["MCP_TIMEOUT"] != "5000" || len(env) != 2 {
		t.Errorf("withMCP = %q, env %v; want %q, MCP_TIMEOUT and %s", argv, env, want, EnvMCPConfigs)
	}
	if strings.Contains(strings.Join(argv, " "), "tok-123") {
		t.Errorf("the inline configuration's token is on the command line: %q", argv)
	}
	b := newApp(Main{Getenv: func(k string) string { return env[k] }})
	b.mcp.configs = []string{abs}
	got, err := b.mcpConfigs()
	if err != nil || len(got) != 2 || got[0] != abs || got[1] != inline {
		t.Errorf("the teammate's configurations = %q, %v; want the file and the inline one", got, err)
	}
	bad := newApp(Main{Getenv: func(k string) string { return map[string]string{EnvMCPConfigs: "{"}[k] }})
	if _, err := bad.mcpConfigs(); err == nil || !strings.Contains(err.Error(), EnvMCPConfigs) {
		t.Errorf("a malformed $%s = %v; want an error naming it", EnvMCPConfigs, err)
	}
}

// TestMCPServeHTTP: --http off loopback needs a token, a short one is
// refused, and with one (from $TROUPE_MCP_TOKEN, off the command line) a
// request without it is refused while a client with it joins.
func TestMCPServeHTTP(t *testing.T) {
	h := &harness{t: t, home: t.TempDir(), openStore: cli.OpenFileStore, env: map[string]string{}}
	h.ok("team", "create", "crew")
	if r := h.exec("", "mcp", "serve", "--team", "crew", "--agent", "gem", "--http", "0.0.0.0:0"); r.err == nil || !strings.Contains(r.err.Error(), "TROUPE_MCP_TOKEN") {
		t.Errorf("--http 0.0.0.0:0 without a token: %v; want a usage error naming $TROUPE_MCP_TOKEN", r.err)
	}
	for _, args := range [][]string{{"--token", "x"}, {"--token", "fifteen-chars15"}} {
		r := h.exec("", append([]string{"mcp", "serve", "--team", "crew", "--agent", "gem", "--http", "127.0.0.1:0"}, args...)...)
		if r.err == nil || !strings.Contains(r.err.Error(), "at least 16") {
			t.Errorf("mcp serve %q: %v; want a usage error asking for 16 characters", args, r.err)
		}
	}
	const token = "s3cret-s3cret-s3cret"
	h.env[mcpcmd.EnvMCPToken] = token
	out := newSyncBuffer()
	stop := h.runAsync(out, "mcp", "serve", "--team", "crew", "--agent", "gem", "--http", "127.0.0.1:0")
	defer stop()
	text := out.waitFor(t, "the server's URL", func(s string) bool { return strings.Contains(s, "streamable HTTP on") })
	_, url, _ := strings.Cut(text, "streamable HTTP on ")
	url = strings.TrimSpace(strings.SplitN(url, "\n", 2)[0])
	if strings.Contains(text, "Bearer") {
		t.Errorf("mcp serve printed a token although one was given:\n%s", text)
	}
	servers := []mcp.Server{
		{Name: "bad", Type: mcp.TypeHTTP, URL: url, Headers: map[string]string{"Authorization": "Bearer " + token[:len(token)-1]}},
		{Name: "none", Type: mcp.TypeHTTP, URL: url},
		{Name: "good", Type: mcp.TypeHTTP, URL: url, Headers: map[string]string{"Authorization": "Bearer " + token}},
	}
	m := mcp.Start(t.Context(), servers, mcp.Options{StartTimeout: 10 * time.Second})
	defer m.Close()
	st := m.Status()
	for _, s := range st[:2] {
		if s.State != mcp.StateFailed || !strings.Contains(s.Err.Error(), "Unauthorized") {
			t.Errorf("%s: %+v; want refused", s.Name, s)
		}
	}
	if st[2].State != mcp.StateConnected {
		t.Fatalf("right token: %v", st[2].Err)
	}
	if res := call(t, m.Tools(), "mcp__good__TeamMembers", `{}`); !strings.Contains(res.Content, "gem (gem@crew, mcp") {
		t.Errorf("TeamMembers = %+v", res)
	}
}

// Without a token, mcp serve --http on loopback makes one (128 bits or
// more) and prints it; a request needs it.
func TestMCPServeHTTPMakesAToken(t *testing.T) {
	h := &harness{t: t, home: t.TempDir(), openStore: cli.OpenFileStore, env: map[string]string{}}
	h.ok("team", "create", "crew")
	out := newSyncBuffer()
	stop := h.runAsync(out, "mcp", "serve", "--team", "crew", "--agent", "gem", "--http", "127.0.0.1:0")
	defer stop()
	url, token := servedURLAndToken(t, out)
	if len(token) < 22 { // rand.Text: 26 base32 characters, 130 bits
		t.Fatalf("made token %q; want at least 128 bits", token)
	}
	m := mcp.Start(t.Context(), []mcp.Server{
		{Name: "none", Type: mcp.TypeHTTP, URL: url},
		{Name: "good", Type: mcp.TypeHTTP, URL: url, Headers: map[string]string{"Authorization": "Bearer " + token}},
	}, mcp.Options{StartTimeout: 10 * time.Second})
	defer m.Close()
	st := m.Status()
	if st[0].State != mcp.StateFailed || !strings.Contains(st[0].Err.Error(), "Unauthorized") {
		t.Errorf("no token: %+v; want refused", st[0])
	}
	if st[1].State != mcp.StateConnected {
		t.Errorf("the printed token: %v", st[1].Err)
	}
}

// servedURLAndToken waits for mcp serve --http's URL and made token.
func servedURLAndToken(t *testing.T, out *syncBuffer) (url, token string) {
	t.Helper()
	text := out.waitFor(t, "the server's URL and token", func(s string) bool { return strings.Contains(s, "Authorization: Bearer ") })
	_, url, _ = strings.Cut(text, "streamable HTTP on ")
	url = strings.TrimSpace(strings.SplitN(url, "\n", 2)[0])
	_, token, _ = strings.Cut(text, "Authorization: Bearer ")
	return url, strings.TrimSpace(strings.SplitN(token, "\n", 2)[0])
}

// TestMCPReport: /mcp lists each server's state and tools, and the
// failure of a failed one.
func TestMCPReport(t *testing.T) {
	home := t.TempDir()
	a := newApp(Main{Getenv: func(string) string { return "" }, Stderr: io.Discard, HomeDir: func() (string, error) { return home, nil }})
	a.HomeFlag = home
	trustTemp(t, a.HomeFlag) // main_test.go
	if r := a.mcpReport(); !strings.Contains(r, "No MCP servers") {
		t.Errorf("report without servers = %q", r)
	}
	a.mcp.configs = []string{stdioConfig(t, "local", "ok"), stdioConfig(t, "broken", "fail")}
	a.mcp.strict = true
	closeMCP, err := a.startMCP(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer closeMCP()
	r := a.mcpReport()
	for _, want := range []string{"local: ", "connected, 5 tools", "mcp__local__echo", "broken: ", "- failed", "TEST_API_KEY is not set"} {
		if !strings.Contains(r, want) {
			t.Errorf("report = %q; want it to contain %q", r, want)
		}
	}
}

// TestMCPNPMServers: troupe -p drives the reference npm servers, with the
// scripted model and with the fake Anthropic server (which sees the MCP
// tool's schema and its result).
func TestMCPNPMServers(t *testing.T) {
	everything, filesystem := mcptest.NPMBin(t, "mcp-server-everything"), mcptest.NPMBin(t, "mcp-server-filesystem")
	cwd := t.TempDir()
	os.WriteFile(filepath.Join(cwd, "notes.txt"), []byte("alpha beta"), 0o600)
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"everything": map[string]any{"command": everything, "args": []string{"stdio"}},
		"fs":         map[string]any{"command": filesystem, "args": []string{cwd}}}})
	t.Run("scripted", func(t *testing.T) {
		script := mcpScript(t, "mcp__fs__read_text_file", `{"path":`+jsonString(filepath.Join(cwd, "notes.txt"))+`}`, "alpha beta")
		out, stderr, err := runMCP(t, cwd, nil, "-p", "--trust", "--script", script, "--mcp-config", string(cfg), "--allowedTools", "mcp__fs", "go")
		if err != nil || !strings.Contains(out, "GOT IT") {
			t.Errorf("troupe -p: %v\nstdout: %s\nstderr: %s", err, out, stderr)
		}
	})
	t.Run("anthropic", func(t *testing.T) {
		srv := llmtest.NewAnthropicServer(t, llmtest.AnthropicScript(
			llmtest.AnthropicToolCall("toolu_1", "mcp__everything__echo", `{"message": "hi from the model"}`),
			llmtest.AnthropicText("done"),
		))
		env := map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": srv.URL}
		out, stderr, err := runMCP(t, cwd, env, "-p", "--trust", "--mcp-config", string(cfg), "--allowedTools", "mcp__everything__echo", "go")
		if err != nil || !strings.Contains(out, "done") {
			t.Fatalf("troupe -p: %v\nstdout: %s\nstderr: %s", err, out, stderr)
		}
		reqs := srv.Requests()
		if len(reqs) != 2 {
			t.Fatalf("%d requests; want 2", len(reqs))
		}
		var schema string
		for _, tl := range reqs[0].Tools {
			if tl.Name == "mcp__everything__echo" {
				schema = string(tl.InputSchema)
			}
		}
		if !strings.Contains(schema, `"message"`) {
			t.Errorf("mcp__everything__echo's schema sent to the model = %q; want the server's", schema)
		}
		last := reqs[1].Messages[len(reqs[1].Messages)-1]
		var result string
		for _, b := range last.Content {
			if b.Type == "tool_result" {
				result = b.Text
			}
		}
		if !strings.Contains(result, "hi from the model") {
			t.Errorf("tool result sent to the model = %q; want the echo", result)
		}
	})
}

// mcpConformancePass are the scenarios of the MCP conformance suite
// (0.1.10) that troupe mcp serve passes: those about the protocol itself.
// The others call the suite's reference fixtures (test_simple_text,
// test://static-text, test_prompt...), which a teammate server does not
// have, or completion/complete, which it does not offer.
var mcpConformancePass = []string{"server-initialize", "logging-set-level", "ping", "tools-list",
	"server-sse-multiple-streams", "resources-list", "prompts-list"}

// TestMCPConformance runs the official conformance suite against troupe
// mcp serve --http.
func TestMCPConformance(t *testing.T) {
	bin := mcptest.NPMBin(t, "conformance")
	h := &harness{t: t, home: t.TempDir(), openStore: cli.OpenFileStore, env: map[string]string{}}
	h.ok("team", "create", "conf")
	out := newSyncBuffer()
	stop := h.runAsync(out, "mcp", "serve", "--team", "conf", "--agent", "tester", "--http", "127.0.0.1:0")
	defer stop()
	served, token := servedURLAndToken(t, out)
	// The suite sends no Authorization header: a proxy adds the token.
	target, err := neturl.Parse(served)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	direct := proxy.Director
	proxy.Director = func(r *http.Request) { direct(r); r.Header.Set("Authorization", "Bearer "+token) }
	proxy.FlushInterval = -1 // event streams
	ps := httptest.NewServer(proxy)
	defer ps.Close()
	url := ps.URL + "/"
	for _, sc := range mcpConformancePass {
		c := exec.CommandContext(t.Context(), bin, "server", "--url", url, "--scenario", sc)
		c.Dir = t.TempDir() // it writes results/ where it runs
		b, err := c.CombinedOutput()
		if err != nil || !strings.Contains(string(b), "0 failed") {
			t.Errorf("conformance %s: %v\n%s", sc, err, b)
		}
	}
}

// TestMCPConformanceClient runs the suite's client scenarios initialize,
// tools_call (the model calls add_numbers) and sse-retry (the model calls
// test_reconnection, whose event stream the server closes before its
// answer) against troupe -p; each scenario's server has one of the two
// tools, and a call of the other is an unknown tool that never leaves
// troupe. The others need what troupe's client does not do: OAuth
// (auth/*) and elicitation.
func TestMCPConformanceClient(t *testing.T) {
	bin := mcptest.NPMBin(t, "conformance")
	dir := t.TempDir()
	script := filepath.Join(dir, "script.json")
	writeFile(t, script, `{"turns": [
	  {"match": {"turn": 0}, "reply": {"tool_calls": [{"id": "t1", "name": "mcp__conf__add_numbers", "input": {"a": 2, "b": 3}},
	    {"id": "t2", "name": "mcp__conf__test_reconnection", "input": {}}]}},
	  {"match": {}, "reply": {"text": "done"}, "repeat": true}]}`)
	client := filepath.Join(dir, "client.sh")
	writeFile(t, client, `#!/bin/sh
for url; do :; done
exec env `+asTroupeEnv+`=1 GORACE=atexit_sleep_ms=0 "`+os.Args[0]+`" -p --trust --home "`+filepath.Join(dir, "home")+`" --cwd "`+dir+`" \
  --provider scripted --script "`+script+`" --allowedTools mcp__conf --strict-mcp-config \
  --mcp-config "{\"mcpServers\":{\"conf\":{\"type\":\"http\",\"url\":\"$url\"}}}" go
`)
	if err := os.Chmod(client, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, sc := range []string{"initialize", "tools_call", "sse-retry"} {
		c := exec.CommandContext(t.Context(), bin, "client", "--command", client, "--scenario", sc, "--timeout", "20000")
		c.Dir = t.TempDir()
		b, err := c.CombinedOutput()
		if err != nil || !strings.Contains(string(b), "0 failed") {
			t.Errorf("conformance client %s: %v\n%s", sc, err, b)
		}
	}
}

// TestMCPCoordinator: in coordinator mode the lead's prompt names the
// connected servers, whose tools its workers get.
func TestMCPCoordinator(t *testing.T) {
	script := filepath.Join(t.TempDir(), "script.json")
	writeFile(t, script, `{"turns": [
	  {"match": {"system": "MCP servers: local (their tools are available to workers)"}, "reply": {"text": "GOT IT"}},
	  {"match": {}, "reply": {"text": "MISSING"}, "repeat": true}]}`)
	out, stderr, err := runMCP(t, t.TempDir(), nil, "-p", "--trust", "--coordinator", "--script", script, "--mcp-config", stdioConfig(t, "local", "ok"), "go")
	if err != nil || !strings.Contains(out, "GOT IT") {
		t.Errorf("troupe -p --coordinator: %v\nstdout: %s\nstderr: %s", err, out, stderr)
	}
}
