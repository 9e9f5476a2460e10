package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/internal/proctest"
	"github.com/troupe-dev/troupe/telemetry"
	"github.com/troupe-dev/troupe/telemetry/telemetrytest"
)

// A lead with keys and an OTLP header in its environment starts a
// teammate in a tmux pane: no tmux command line holds them (a tmux on
// PATH logs every argv it is given; short-lived, the tmux client and the
// pane's shell are easily missed in /proc), nor, while the team runs, any
// process's command line (/proc/*/cmdline, which any local user reads);
// and the teammate still has them: its spans reach the receiver with the
// OTLP header.
func TestPaneTeammateSecretsOffTheCommandLine(t *testing.T) {
	needTmux(t)
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		t.Skip("no /proc here")
	}
	sock := tmuxSocket(t)
	recv := telemetrytest.New(t)
	dir := t.TempDir()
	home, cwd := homeAndWork(t, dir)
	script := filepath.Join(dir, "script.json")
	writeFile(t, script, `{"turns":[
 {"match":{"system":"You are troupe,","turn":0},"reply":{"tool_calls":[
   {"name":"TeamCreate","input":{"team_name":"keys"}},
   {"name":"Agent","input":{"description":"greeter","name":"ann","prompt":"say hi"}}]}},
 {"match":{"system":"You are troupe,","user":"teammate-idle-digest"},"reply":{"tool_calls":[
   {"name":"SendMessage","input":{"to":"ann","message":{"type":"shutdown_request","reason":"done"}}}]}},
 {"match":{"system":"You are troupe,"},"reply":{"text":"noted"},"repeat":true},
 {"match":{"system":"You are teammate","user":"shutdown_request"},"reply":{"tool_calls":[
   {"name":"SendMessage","input":{"to":"team-lead","message":{"type":"shutdown_response","request_id":"{{capture:\"request_id\": \"(shutdown-[^\"]+)\"}}","approve":true}}}]},"repeat":true},
 {"match":{"system":"You are teammate"},"reply":{"text":"HI"},"repeat":true}
]}`)
	var r [8]byte
	rand.Read(r[:])
	key := "fake-" + hex.EncodeToString(r[:])
	c := exec.CommandContext(t.Context(), os.Args[0], "-p", "--agent-teams", "--explicit-teams", "--teammate-mode", "tmux", "--home", home,
		"--provider", "scripted", "--script", script, "--cwd", cwd, "go")
	real, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "bin")
	argvLog := filepath.Join(dir, "tmux-argv")
	if err := os.Mkdir(bin, 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(bin, "tmux"), "#!/bin/sh\nprintf '%s\\037' \"$@\" >> '"+argvLog+"'\necho >> '"+argvLog+"'\nexec '"+real+"' \"$@\"\n")
	if err := os.Chmod(filepath.Join(bin, "tmux"), 0o700); err != nil {
		t.Fatal(err)
	}
	env := troupeEnv(t, sock)
	for i, kv := range env {
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			env[i] = "PATH=" + bin + string(os.PathListSeparator) + p
		}
	}
	c.Env = append(env, "OTEL_EXPORTER_OTLP_ENDPOINT="+recv.URL,
		"OTEL_EXPORTER_OTLP_HEADERS=x-troupe-test=otlp-"+key, "ANTHROPIC_API_KEY=sk-ant-"+key, "OPENAI_API_KEY=sk-openai-"+key)
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() { ended <- c.Wait() }()
	var holding []string
watch:
	for {
		holding = append(holding, proctest.CmdlinesHolding(key)...)
		select {
		case err = <-ended:
			break watch
		case <-time.After(5 * time.Millisecond):
		}
	}
	if err != nil {
		t.Fatalf("the lead failed: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	if len(holding) > 0 {
		t.Errorf("secrets on command lines:\n%s", strings.Join(holding, "\n"))
	}
	argv, err := os.ReadFile(argvLog)
	if err != nil || !strings.Contains(string(argv), "respawn-pane") {
		t.Fatalf("the tmux on PATH did not start the pane (%v):\n%s", err, argv)
	}
	if strings.Contains(string(argv), key) {
		t.Errorf("tmux was given a secret on its command line:\n%s", argv)
	}
	var annRun telemetrytest.Span
	for deadline := time.Now().Add(15 * time.Second); annRun.SpanID == "" && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		for _, s := range recv.Spans() {
			if s.Name == telemetry.SpanRun && s.Attrs[telemetry.AttrAgent] == "ann" {
				annRun = s
			}
		}
	}
	if annRun.SpanID == "" {
		t.Fatalf("no run of ann's received\nstderr:\n%s", stderr.String())
	}
	if got := annRun.Header.Get("X-Troupe-Test"); got != "otlp-"+key {
		t.Errorf("ann's spans came with x-troupe-test %q; want the lead's OTEL_EXPORTER_OTLP_HEADERS value", got)
	}
}
