package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/telemetry"
	"github.com/troupe-dev/troupe/telemetry/telemetrytest"
)

// One team run is one trace across processes: the lead's session, its
// runs, and the runs of a teammate in its own tmux pane (another troupe
// process), linked through the trace context the lead's messages carry,
// all exported to an in-process OTLP/HTTP receiver.
func TestTeamTraceAcrossPane(t *testing.T) {
	needTmux(t)
	sock := tmuxSocket(t)
	recv := telemetrytest.New(t)
	dir := t.TempDir()
	home, cwd := homeAndWork(t, dir)
	script := filepath.Join(dir, "script.json")
	writeFile(t, script, `{"turns":[
 {"match":{"system":"You are troupe,","turn":0},"reply":{"tool_calls":[
   {"name":"TeamCreate","input":{"team_name":"traced"}},
   {"name":"Agent","input":{"description":"greeter","name":"ann","prompt":"say hi"}}]}},
 {"match":{"system":"You are troupe,","user":"teammate-idle-digest"},"reply":{"tool_calls":[
   {"name":"SendMessage","input":{"to":"ann","message":{"type":"shutdown_request","reason":"done"}}}]}},
 {"match":{"system":"You are troupe,"},"reply":{"text":"noted"},"repeat":true},
 {"match":{"system":"You are teammate","user":"shutdown_request"},"reply":{"tool_calls":[
   {"name":"SendMessage","input":{"to":"team-lead","message":{"type":"shutdown_response","request_id":"{{capture:\"request_id\": \"(shutdown-[^\"]+)\"}}","approve":true}}}]},"repeat":true},
 {"match":{"system":"You are teammate"},"reply":{"text":"HI"},"repeat":true}
]}`)
	c := exec.CommandContext(t.Context(), os.Args[0], "-p", "--trust", "--agent-teams", "--explicit-teams", "--teammate-mode", "tmux", "--home", home,
		"--provider", "scripted", "--script", script, "--cwd", cwd, "go")
	c.Env = append(troupeEnv(t, sock), "OTEL_EXPORTER_OTLP_ENDPOINT="+recv.URL)
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		t.Fatalf("the lead failed: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	var session, annRun telemetrytest.Span
	leadRuns := map[string]bool{}
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		for _, s := range recv.Spans() {
			switch {
			case s.Name == telemetry.SpanSession:
				session = s
			case s.Name == telemetry.SpanRun && s.Attrs[telemetry.AttrAgent] == "team-lead":
				leadRuns[s.SpanID] = true
			case s.Name == telemetry.SpanRun && s.Attrs[telemetry.AttrAgent] == "ann":
				annRun = s
			}
		}
		if session.SpanID != "" && annRun.SpanID != "" {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if errs := recv.Errors(); len(errs) > 0 {
		t.Errorf("the receiver could not decode: %v", errs)
	}
	if session.SpanID == "" || annRun.SpanID == "" || len(leadRuns) == 0 {
		t.Fatalf("spans received: session %+v, ann's run %+v, %d lead runs; all: %+v\nstderr:\n%s\nstdout:\n%s", session, annRun, len(leadRuns), recv.Spans(), stderr.String(), stdout.String())
	}
	t.Logf("%d spans received; ann's run %s under lead run %s, trace %s", len(recv.Spans()), annRun.SpanID, annRun.ParentID, session.TraceID)
	if annRun.TraceID != session.TraceID {
		t.Errorf("ann's run is in trace %s; want the session's %s", annRun.TraceID, session.TraceID)
	}
	// ann's run ← her delivery of the lead's message ← the lead's send ←
	// one of the lead's runs.
	byID := map[string]telemetrytest.Span{}
	for _, s := range recv.Spans() {
		byID[s.SpanID] = s
	}
	deliver := byID[annRun.ParentID]
	send := byID[deliver.ParentID]
	if deliver.Name != telemetry.SpanDeliver || deliver.Attrs[telemetry.AttrMsgTo] != "ann" || send.Name != telemetry.SpanSend ||
		send.Attrs[telemetry.AttrAgent] != "team-lead" || !leadRuns[send.ParentID] {
		t.Errorf("ann's run's parent is %+v, its parent %+v; want her delivery of the lead's send, under one of the lead's runs %v", deliver, send, leadRuns)
	}
	for _, s := range recv.Spans() {
		if s.TraceID != session.TraceID {
			t.Errorf("span %s (%s) is in another trace %s", s.Name, s.Attrs[telemetry.AttrAgent], s.TraceID)
		}
	}
	// Metrics: both processes' tokens by agent, and the lead's messages.
	var annTokens, leadMsgs int64
	for _, p := range recv.Points() {
		switch {
		case p.Metric == telemetry.MetricTokens && p.Attrs[telemetry.AttrAgent] == "ann" && p.Attrs[telemetry.AttrTokenType] == "output":
			annTokens = p.Int
		case p.Metric == telemetry.MetricMessages && p.Attrs[telemetry.AttrAgent] == "team-lead":
			leadMsgs = p.Int
		}
	}
	// ann's task (in_process_teammate or pane) ended: its duration is in
	// the histogram; the queue gauges were read at the last export.
	var durations int64
	gauges := map[string]bool{}
	for _, p := range recv.Points() {
		switch p.Metric {
		case telemetry.MetricTaskDuration:
			durations += p.Int
		case telemetry.MetricTasksPending, telemetry.MetricJobsPending:
			gauges[p.Metric] = true
		}
	}
	if durations == 0 || len(gauges) != 2 {
		t.Errorf("metrics: %d task durations, gauges %v; want ann's task's duration and both queue gauges", durations, gauges)
	}
	if annTokens == 0 || leadMsgs == 0 {
		t.Errorf("metrics: ann's output tokens %d, the lead's messages %d; want both counted", annTokens, leadMsgs)
	}
	if strings.Contains(stderr.String(), "telemetry: flush") {
		t.Errorf("a flush failed:\n%s", stderr.String())
	}
}
