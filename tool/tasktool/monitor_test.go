package tasktool_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/troupe-dev/troupe/mcp"
	"github.com/troupe-dev/troupe/mcp/mcptest"
	taskreg "github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/tool"
	"github.com/troupe-dev/troupe/tool/tasktool"
)

var monitorIDRE = regexp.MustCompile(`Monitor (m[0-9a-z]{8}) started`)

// startMonitor runs a Monitor call and returns its task id.
func startMonitor(t *testing.T, tl tool.Tool, input string) taskreg.ID {
	t.Helper()
	res := run(t, tl, input)
	m := monitorIDRE.FindStringSubmatch(res.Content)
	if res.IsError || m == nil {
		t.Fatalf("Monitor(%s) = %+v", input, res)
	}
	return taskreg.ID(m[1])
}

// nextKind waits for an event of kind k of task id.
func nextKind(t *testing.T, sub *taskreg.Subscription, id taskreg.ID, k taskreg.EventKind) taskreg.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	for {
		e, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("waiting for %s of %s: %v", k, id, err)
		}
		if e.Kind == k && e.State.ID == id {
			return e
		}
	}
}

func TestMonitorInputs(t *testing.T) {
	reg := registry(t)
	mt := tasktool.NewMonitor(tasktool.MonitorConfig{Registry: reg, Dir: t.TempDir()})
	for in, want := range map[string]string{
		`{}`:                                        "exactly one of command, task_id, file and mcp_resource (got 0)",
		`{"command":"true","file":"x.log"}`:         "(got 2)",
		`{"file":"x.log","filter":"a("}`:            "filter is not a valid regular expression",
		`{"file":"x.log","batch_ms":5}`:             "batch_ms must be at least 100",
		`{"task_id":"bnosuch00"}`:                   "no task bnosuch00",
		`{"mcp_resource":{"server":"s","uri":"u"}}`: "no MCP server is connected",
		`{"file":"x.log","color":"red"}`:            "color",
	} {
		if res := run(t, mt, in); !res.IsError || !strings.Contains(res.Content, want) {
			t.Errorf("Monitor(%s) = %+v; want an error with %q", in, res, want)
		}
	}
	if !mt.ReadOnly(json.RawMessage(`{"task_id":"b1"}`)) || mt.ReadOnly(json.RawMessage(`{"command":"rm -rf x"}`)) || mt.ReadOnly(json.RawMessage(`{"file":"/etc/shadow"}`)) {
		t.Error("ReadOnly: following a task is read-only; a command or a file is not")
	}
}

// TestMonitorToolCommandAndTask: a command monitor wakes with its matching
// lines; a second monitor follows the first one's shell by task_id; TaskStop
// of the first ends it and its shell, and the follower then ends too.
func TestMonitorToolCommandAndTask(t *testing.T) {
	reg := registry(t)
	dir := t.TempDir()
	mt := tasktool.NewMonitor(tasktool.MonitorConfig{Registry: reg, Dir: dir})
	sub := reg.Subscribe()
	id := startMonitor(t, mt, `{"command":"echo ready; for i in 1 2 3; do echo tick $i; sleep 0.2; done; echo DONE; sleep 30","filter":"DONE|tick 3","batch_ms":100,"description":"ticker"}`)
	st, _ := reg.Get(id)
	m := st.Detail.(*taskreg.Monitor)
	if m.Source != "command" || m.Shell == "" || st.Description != "ticker" || st.ToolUseID != "toolu_1" {
		t.Fatalf("monitor %+v %+v", st, m)
	}
	follow := startMonitor(t, mt, `{"task_id":"`+string(m.Shell)+`","batch_ms":100}`)
	got := ""
	for !strings.Contains(got, "DONE") {
		e := nextKind(t, sub, id, taskreg.EventMonitor)
		got += e.Notification
	}
	if strings.Contains(got, "ready") || strings.Contains(got, "tick 1") || !strings.Contains(got, "tick 3") {
		t.Errorf("notifications of the filtered monitor:\n%s", got)
	}
	if _, err := tasktool.NewStop(reg, nil).Run(t.Context(), tool.Call{ID: "s", Input: json.RawMessage(`{"task_id":"` + string(id) + `"}`)}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the shell to end", func() bool { s, _ := reg.Get(m.Shell); return s.Status.Terminal() })
	e := nextKind(t, sub, follow, taskreg.EventTerminated)
	if !strings.Contains(e.Notification, "its command was stopped") {
		t.Errorf("follower's end: %s", e.Notification)
	}
}

// TestMonitorToolFile: a relative file is followed in the tool's folder.
func TestMonitorToolFile(t *testing.T) {
	reg := registry(t)
	dir := t.TempDir()
	mt := tasktool.NewMonitor(tasktool.MonitorConfig{Registry: reg, Dir: dir})
	sub := reg.Subscribe()
	id := startMonitor(t, mt, `{"file":"app.log","filter":"(?i)panic","batch_ms":100}`)
	if err := os.WriteFile(filepath.Join(dir, "app.log"), []byte("ok\nPANIC: nil map\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if e := nextKind(t, sub, id, taskreg.EventMonitor); !strings.Contains(e.Notification, "PANIC: nil map") {
		t.Fatalf("notification %s", e.Notification)
	}
}

// TestMonitorToolMCPResource: a monitor of a real go-sdk server's
// subscribable resource (over SSE) wakes on each update with the
// resource's new text; TaskStop unsubscribes.
func TestMonitorToolMCPResource(t *testing.T) {
	srv := mcptest.NewCounterServer()
	hs := httptest.NewServer(sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	m := mcp.Start(t.Context(), []mcp.Server{{Name: "counter", Type: mcp.TypeSSE, URL: hs.URL}}, mcp.Options{})
	t.Cleanup(func() { m.Close() })
	if st := m.Status()[0]; st.State != mcp.StateConnected {
		t.Fatal(st.Err)
	}
	reg := registry(t)
	mt := tasktool.NewMonitor(tasktool.MonitorConfig{Registry: reg, Resources: m})
	sub := reg.Subscribe()
	id := startMonitor(t, mt, `{"mcp_resource":{"server":"counter","uri":"test://counter"},"batch_ms":100}`)
	var bump tool.Tool
	for _, tl := range m.Tools() {
		if tl.Spec().Name == "mcp__counter__bump" {
			bump = tl
		}
	}
	for _, want := range []string{"count 1", "count 2"} {
		if res := run(t, bump, `{}`); res.IsError {
			t.Fatal(res.Content)
		}
		e := nextKind(t, sub, id, taskreg.EventMonitor)
		if !strings.Contains(e.Notification, want) || !strings.Contains(e.Notification, "test://counter of counter updated") {
			t.Fatalf("want %q in %s", want, e.Notification)
		}
	}
	if _, err := reg.Stop(t.Context(), id); err != nil {
		t.Fatal(err)
	}
}
