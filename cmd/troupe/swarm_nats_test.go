package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/cli"
)

// Two "hosts" that share nothing on disk: the lead's side (its own home,
// working through the CLI) and a troupe teammate process with another
// home and working folder coordinate only through a NATS server. The
// teammate reads its prompt from its inbox on the server, does the work in
// its own folder, completes the task, reports, sends its idle
// notification, and approves a shutdown request.
func TestTeamAcrossHostsOnNATS(t *testing.T) {
	h := &harness{t: t, home: t.TempDir(), env: map[string]string{"TROUPE_NATS_TOKEN": "tok"},
		openStore: func(string) (Stores, error) {
			t.Error("the file store was opened although $TROUPE_STORE names a NATS server")
			return cli.OpenFileStore(t.TempDir())
		}}
	url, stop := serveAsync(t, h, t.TempDir(), "tok")
	defer stop()
	h.env["TROUPE_STORE"] = url

	h.ok("team", "create", "two-hosts")
	h.ok("team", "add", "two-hosts", "bob")
	h.ok("task", "create", "--team", "two-hosts", "--subject", "write hello.txt", "--owner", "bob")
	h.ok("inbox", "send", "--team", "two-hosts", "--from", "team-lead", "--to", "bob", "write hello.txt, then complete task 1")

	other := t.TempDir() // the other host: its own home, folder and HOME
	home2, cwd2 := filepath.Join(other, "home"), filepath.Join(other, "work")
	if err := os.MkdirAll(cwd2, 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(other, "script.json")
	writeFile(t, script, `{"turns":[
 {"match":{"user":"shutdown_request"},"reply":{"tool_calls":[{"name":"SendMessage","input":{"to":"team-lead","message":{"type":"shutdown_response","request_id":"{{capture:\"request_id\": \"(shutdown-[^\"]+)\"}}","approve":true}}}]}},
 {"match":{"tool_result":"SendMessage","user":"shutdown"},"reply":{"text":"bye"}},
 {"match":{"user":"write hello.txt"},"reply":{"tool_calls":[{"name":"Write","input":{"file_path":"hello.txt","content":"hello from the other host\n"}}]}},
 {"match":{"tool_result":"Write"},"reply":{"tool_calls":[{"name":"TaskUpdate","input":{"taskId":"1","status":"completed"}}]}},
 {"match":{"tool_result":"TaskUpdate"},"reply":{"tool_calls":[{"name":"SendMessage","input":{"to":"team-lead","message":"BOB-REPORT: hello.txt written"}}]}},
 {"match":{"tool_result":"SendMessage"},"reply":{"text":"done"}}
]}`)
	c := exec.CommandContext(t.Context(), os.Args[0], "--agent-id", "bob@two-hosts", "--agent-name", "bob", "--team-name", "two-hosts",
		"--home", home2, "--cwd", cwd2, "--provider", "scripted", "--script", script, "--permission-mode", "acceptEdits")
	c.Env = append(troupeEnv(t, "unused"), "HOME="+other, "TROUPE_STORE="+url, "TROUPE_NATS_TOKEN=tok")
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- c.Wait() }()

	lead := func() string { return h.ok("inbox", "read", "--team", "two-hosts", "--agent", "team-lead") }
	waitLead := func(what, want string) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for !strings.Contains(lead(), want) {
			if time.Now().After(deadline) {
				_ = c.Process.Kill()
				<-exited
				t.Fatalf("timed out waiting for %s; the lead's inbox:\n%s\nbob:\n%s", what, lead(), out.String())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitLead("bob's report", "BOB-REPORT")
	waitLead("bob's idle notification", "idle_notification")
	if b, err := os.ReadFile(filepath.Join(cwd2, "hello.txt")); err != nil || !strings.Contains(string(b), "other host") {
		t.Errorf("hello.txt in bob's folder: %q, %v", b, err)
	}
	if got := h.ok("task", "get", "--team", "two-hosts", "1"); !strings.Contains(got, "completed") {
		t.Errorf("task 1 after bob's work:\n%s", got)
	}
	h.ok("inbox", "send", "--team", "two-hosts", "--from", "team-lead", "--to", "bob",
		`{"type":"shutdown_request","requestId":"shutdown-1@bob","from":"team-lead","reason":"done","timestamp":"2026-12-02T00:00:00.000Z"}`)
	waitLead("bob's approval", "shutdown_approved")
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("bob exited with %v\n%s", err, out.String())
		}
	case <-time.After(30 * time.Second):
		_ = c.Process.Kill()
		<-exited
		t.Fatalf("bob did not exit after approving its shutdown:\n%s", out.String())
	}
	if _, err := os.Stat(filepath.Join(h.home, "teams")); err == nil {
		t.Error("the lead's home has a teams folder: the file store was used")
	}
	if _, err := os.Stat(filepath.Join(home2, "logs", "two-hosts", "bob.log")); err != nil {
		t.Errorf("bob's log is not in its own home: %v", err)
	}
}
