package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/mcp"
	"github.com/troupe-dev/troupe/mcp/mcptest"
	"github.com/troupe-dev/troupe/tool"
)

// stdio returns a server that runs this test binary in mode (TestMain).
func stdio(t testing.TB, name, mode string) mcp.Server {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// A -race binary sleeps a second at exit unless told not to.
	return mcp.Server{Name: name, Command: exe, Env: map[string]string{serverEnv: mode, "GORACE": "atexit_sleep_ms=0"}, Source: "test"}
}

func start(t testing.TB, servers []mcp.Server, opts mcp.Options) *mcp.Manager {
	t.Helper()
	m := mcp.Start(t.Context(), servers, opts)
	t.Cleanup(func() { m.Close() })
	return m
}

func call(t *testing.T, tools []tool.Tool, name, input string) tool.Result {
	t.Helper()
	for _, tl := range tools {
		if tl.Spec().Name == name {
			res, err := tl.Run(t.Context(), tool.Call{ID: "1", Name: name, Input: json.RawMessage(input)})
			if err != nil {
				t.Fatalf("%s: Go error %v", name, err)
			}
			return res
		}
	}
	t.Fatalf("no tool %s", name)
	return tool.Result{}
}

func TestTransports(t *testing.T) {
	streamable, sse := httpServers(t)
	servers := []mcp.Server{
		stdio(t, "local", "ok"),
		{Name: "remote", Type: mcp.TypeHTTP, URL: streamable, Headers: map[string]string{"X-Test": "${TEST_HEADER:-yes}"}},
		{Name: "legacy", Type: mcp.TypeSSE, URL: sse, Headers: map[string]string{"X-Test": "yes"}},
	}
	m := start(t, servers, mcp.Options{})
	for _, st := range m.Status() {
		if st.State != mcp.StateConnected {
			t.Fatalf("server %s: %s %v", st.Name, st.State, st.Err)
		}
	}
	tools := m.Tools()
	for _, srv := range []string{"local", "remote", "legacy"} {
		t.Run(srv, func(t *testing.T) {
			name := "mcp__" + srv + "__echo"
			res := call(t, tools, name, `{"text":"hi"}`)
			if res.IsError || res.Content != "echo: hi" {
				t.Errorf("%s = %+v; want echo: hi", name, res)
			}
			res = call(t, tools, "mcp__"+srv+"__media", `{}`)
			for _, want := range []string{"here", "[resource link test://hello hello (text/plain)]"} {
				if !strings.Contains(res.Content, want) {
					t.Errorf("media = %q; want it to contain %q", res.Content, want)
				}
			}
			if len(res.Images) != 1 || res.Images[0].MediaType != "image/png" || !bytes.Equal(res.Images[0].Data, mcptest.PNG) {
				t.Errorf("media images = %+v; want the server's PNG", res.Images)
			}
			if res := call(t, tools, "mcp__"+srv+"__fail", `{}`); !res.IsError || res.Content != "it failed" {
				t.Errorf("fail = %+v; want an error result", res)
			}
			if res := call(t, tools, mcp.ReadResourceName, `{"server":"`+srv+`","uri":"test://hello"}`); !strings.Contains(res.Content, "hello, world") {
				t.Errorf("ReadMcpResource = %+v", res)
			}
			if res := call(t, tools, mcp.ReadResourceName, `{"server":"`+srv+`","uri":"test://dot"}`); len(res.Images) != 1 ||
				!bytes.Equal(res.Images[0].Data, mcptest.PNG) || !strings.Contains(res.Content, "shown as a picture") {
				t.Errorf("ReadMcpResource(test://dot) = %q with %d images; want the PNG as a picture", res.Content, len(res.Images))
			}
		})
	}
	var echo tool.Tool
	for _, tl := range tools {
		if tl.Spec().Name == "mcp__local__echo" {
			echo = tl
		}
	}
	if !echo.ReadOnly(nil) {
		t.Error("echo.ReadOnly = false; want the readOnlyHint")
	}
	if s := string(echo.Spec().InputSchema); !strings.Contains(s, `"text"`) || !strings.Contains(s, "the text to echo") {
		t.Errorf("echo schema = %s; want the server's", s)
	}
	res := call(t, tools, mcp.ListResourcesName, `{}`)
	if strings.Count(res.Content, "test://hello") != 3 {
		t.Errorf("ListMcpResources = %q; want one line per server", res.Content)
	}
	if res := call(t, tools, mcp.ListResourcesName, `{"server":"nope"}`); !res.IsError || !strings.Contains(res.Content, "local, remote, legacy") {
		t.Errorf("ListMcpResources(nope) = %+v; want an error naming the servers", res)
	}
	if res := call(t, tools, "mcp__local__echo", `{"text":`); !res.IsError {
		t.Errorf("echo(bad JSON) = %+v; want an error result", res)
	}
}

// TestStartFailures: a server that exits, one that hangs, one without its
// variables and one refusing our headers fail, each said clearly, while
// the good one works.
func TestStartFailures(t *testing.T) {
	streamable, _ := httpServers(t)
	servers := []mcp.Server{
		stdio(t, "good", "ok"),
		stdio(t, "crash", "fail"),
		stdio(t, "hang", "hang"),
		{Name: "vars", Command: "${TROUPE_TEST_UNSET_VAR}", Source: ".mcp.json"},
		{Name: "noauth", Type: mcp.TypeHTTP, URL: streamable},
		{Name: "missing", Command: "/nonexistent/troupe-mcp-server"},
		{Name: "helper", Type: mcp.TypeHTTP, URL: streamable, HeadersHelper: "print-token"},
	}
	began := time.Now()
	m := start(t, servers, mcp.Options{StartTimeout: time.Second, StopTimeout: 100 * time.Millisecond})
	if d := time.Since(began); d > 5*time.Second {
		t.Errorf("Start took %v; want the servers started in parallel within the 1s timeout", d)
	}
	want := map[string][]string{
		"crash":   {`"crash"`, "failed to start", "fatal: TEST_API_KEY is not set"},
		"hang":    {`"hang"`, "MCP_TIMEOUT"},
		"vars":    {`"vars"`, "TROUPE_TEST_UNSET_VAR", ".mcp.json"},
		"noauth":  {`"noauth"`, "Unauthorized"},
		"missing": {`"missing"`, "/nonexistent/troupe-mcp-server"},
		"helper":  {`"helper"`, "headersHelper and oauth", "not supported"},
	}
	for _, st := range m.Status() {
		if st.Name == "good" {
			if st.State != mcp.StateConnected || len(st.Tools) != 5 {
				t.Errorf("good: %s %v tools %v; want connected with 5 tools", st.State, st.Err, st.Tools)
			}
			continue
		}
		if st.State != mcp.StateFailed || st.Err == nil {
			t.Errorf("%s: %s; want failed", st.Name, st.State)
			continue
		}
		for _, w := range want[st.Name] {
			if !strings.Contains(st.Err.Error(), w) {
				t.Errorf("%s: error %q; want it to contain %q", st.Name, st.Err, w)
			}
		}
	}
	if res := call(t, m.Tools(), "mcp__good__echo", `{"text":"still"}`); res.Content != "echo: still" {
		t.Errorf("good echo = %+v", res)
	}
}

// TestDiesMidCall: a server that dies during a call is restarted once,
// and after a second death it is marked failed.
func TestDiesMidCall(t *testing.T) {
	m := start(t, []mcp.Server{stdio(t, "fragile", "ok")}, mcp.Options{})
	tools := m.Tools()
	res := call(t, tools, "mcp__fragile__die", `{}`)
	if !res.IsError || !strings.Contains(res.Content, "restarted") {
		t.Fatalf("die = %+v; want an error saying it was restarted", res)
	}
	if res := call(t, tools, "mcp__fragile__echo", `{"text":"back"}`); res.Content != "echo: back" {
		t.Fatalf("echo after restart = %+v", res)
	}
	res = call(t, tools, "mcp__fragile__die", `{}`)
	if !res.IsError || !strings.Contains(res.Content, "unavailable") {
		t.Fatalf("second die = %+v; want unavailable", res)
	}
	st := m.Status()[0]
	if st.State != mcp.StateFailed || st.Restart != 1 || !strings.Contains(st.Err.Error(), "dying on purpose") {
		t.Errorf("status = %+v; want failed after 1 restart, with the stderr tail", st)
	}
	if res := call(t, tools, "mcp__fragile__echo", `{"text":"x"}`); !res.IsError {
		t.Errorf("echo on failed server = %+v; want an error result", res)
	}
}

func TestCallTimeout(t *testing.T) {
	m := start(t, []mcp.Server{stdio(t, "slow", "ok")}, mcp.Options{CallTimeout: 200 * time.Millisecond})
	res := call(t, m.Tools(), "mcp__slow__sleep", `{"millis":5000}`)
	if !res.IsError || !strings.Contains(res.Content, "MCP_TOOL_TIMEOUT") {
		t.Errorf("sleep = %+v; want a timeout error result", res)
	}
	if res := call(t, m.Tools(), "mcp__slow__echo", `{"text":"ok"}`); res.Content != "echo: ok" {
		t.Errorf("echo after timeout = %+v; want the server still usable", res)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := m.Tools()[0].Run(ctx, tool.Call{Input: json.RawMessage(`{"text":"x"}`)}); err == nil {
		t.Error("Run with a canceled ctx: nil error; want the cancellation")
	}
}
