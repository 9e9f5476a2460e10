//go:build unix

package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/internal/proctest"
	"github.com/troupe-dev/troupe/tool"
)

// selfServerMode, set in its environment, makes the test binary a small
// stdio MCP server speaking raw JSON-RPC, misbehaving as the mode says:
// "dup" lists two tools whose names read alike once made safe, "silent"
// never answers initialize; every mode pages resources/list without end.
const selfServerMode = "TROUPE_MCP_SELFSERVER"

func init() {
	mode := os.Getenv(selfServerMode)
	if mode == "" {
		return
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<24)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(in.Bytes(), &req) != nil || req.ID == nil {
			continue
		}
		var res any
		switch req.Method {
		case "initialize":
			if mode == "silent" {
				continue
			}
			res = map[string]any{"protocolVersion": "2025-06-18", "serverInfo": map[string]any{"name": "self", "version": "1"},
				"capabilities": map[string]any{"tools": map[string]any{}, "resources": map[string]any{}}}
		case "tools/list":
			tools := []any{map[string]any{"name": "a.b", "inputSchema": map[string]any{"type": "object"}}}
			if mode == "dup" {
				tools = append(tools, map[string]any{"name": "a_b", "inputSchema": map[string]any{"type": "object"}})
			}
			res = map[string]any{"tools": tools}
		case "resources/list":
			res = map[string]any{"resources": []any{map[string]any{"uri": "file:///" + strings.Repeat("x", 100), "name": "r"}}, "nextCursor": "more"}
		default:
			res = map[string]any{}
		}
		_ = out.Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": res})
	}
	os.Exit(0)
}

// selfServer is a server entry running the test binary in mode.
func selfServer(name, mode string) Server {
	exe, _ := os.Executable()
	return Server{Name: name, Command: exe, Env: map[string]string{selfServerMode: mode}}
}

// childOfSelfServer is a server entry that starts a background child (its
// pid written to pidFile) and then becomes the self server in mode, as a
// server started through a shell or npx does.
func childOfSelfServer(pidFile, mode string) Server {
	exe, _ := os.Executable()
	return Server{Name: "kid", Command: "sh", Args: []string{"-c", "sleep 120 & echo $! > " + pidFile + "; exec " + exe},
		Env: map[string]string{selfServerMode: mode}}
}

// gone reports whether the process whose id is in pidFile ends within
// 5 s (killing it when it does not).
func gone(t *testing.T, pidFile string) bool {
	t.Helper()
	pid := proctest.PID(t, pidFile)
	if proctest.WaitGone(pid, 5*time.Second) {
		return true
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	return false
}

// A server's children end with it: on Close, and when it fails to start.
func TestServerChildrenEnd(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	m := Start(context.Background(), []Server{childOfSelfServer(pidFile, "ok")}, Options{StopTimeout: 200 * time.Millisecond})
	if st := m.Status()[0]; st.State != StateConnected {
		t.Fatalf("server: %v", st.Err)
	}
	if err := m.Close(); err != nil {
		t.Errorf("Close = %v; want nil", err)
	}
	if !gone(t, pidFile) {
		t.Error("the server's child still runs after Close")
	}

	pidFile = filepath.Join(t.TempDir(), "pid")
	m = Start(context.Background(), []Server{childOfSelfServer(pidFile, "silent")}, Options{StartTimeout: 500 * time.Millisecond, StopTimeout: 200 * time.Millisecond})
	if st := m.Status()[0]; st.State == StateConnected {
		t.Fatal("a server that never answers initialize connected")
	}
	m.Close()
	if !gone(t, pidFile) {
		t.Error("the child of a server that failed to start still runs")
	}
}

// Tool names that read alike once made safe (a.b and a_b, or one name
// listed twice) give one tool, not a tool set the agent's registry
// refuses whole.
func TestToolNamesThatCollide(t *testing.T) {
	m := Start(context.Background(), []Server{selfServer("s", "dup")}, Options{})
	defer m.Close()
	ts := m.Tools()
	if _, err := tool.NewRegistry(ts...); err != nil {
		t.Fatalf("one server's tool names break the registry: %v", err)
	}
	n := 0
	for _, x := range ts {
		if x.Spec().Name == "mcp__s__a_b" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d tools named mcp__s__a_b; want 1", n)
	}
}

// A server that pages resources/list without end gives a bounded list
// that says it stops, not one that grows until the call's timeout.
func TestEndlessResourceList(t *testing.T) {
	m := Start(context.Background(), []Server{selfServer("s", "ok")}, Options{CallTimeout: 20 * time.Second})
	defer m.Close()
	var lr tool.Tool
	for _, x := range m.Tools() {
		if x.Spec().Name == ListResourcesName {
			lr = x
		}
	}
	if lr == nil {
		t.Fatal("no ListMcpResources tool")
	}
	res, err := lr.Run(context.Background(), tool.Call{Input: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(res.Content, "\n"); n > MaxListed+5 || !strings.Contains(res.Content, "the list stops here") {
		t.Errorf("ListMcpResources gave %d lines (%d bytes); want at most %d and a note that it stops", n, len(res.Content), MaxListed)
	}
}
