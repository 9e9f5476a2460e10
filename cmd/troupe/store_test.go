package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/cli"
)

var natsURL = regexp.MustCompile(`nats://127\.0\.0\.1:[0-9]+`)

// serveAsync runs troupe serve on a free loopback port with data in dir
// and returns its URL and a function that stops it.
func serveAsync(t *testing.T, h *harness, dir, token string) (string, func() error) {
	t.Helper()
	out := newSyncBuffer()
	stop := h.runAsync(out, "serve", "--addr", "127.0.0.1:0", "--data", dir, "--token", token)
	text := out.waitFor(t, "the server's URL", func(s string) bool { return strings.Contains(s, "Use it with") })
	url := natsURL.FindString(text)
	if url == "" || strings.HasSuffix(url, ":0") {
		stop()
		t.Fatalf("troupe serve printed no usable URL:\n%s", text)
	}
	return url, stop
}

// TestCommandsOnNATS runs team, inbox and task commands against troupe
// serve, selected with $TROUPE_STORE, and checks that the data outlives a
// restart of the server.
func TestCommandsOnNATS(t *testing.T) {
	data := t.TempDir()
	h := &harness{t: t, home: t.TempDir(), env: map[string]string{"TROUPE_NATS_TOKEN": "tok"},
		openStore: func(string) (Stores, error) {
			t.Error("the file store was opened although $TROUPE_STORE names a NATS server")
			return cli.OpenFileStore(t.TempDir())
		}}
	url, stop := serveAsync(t, h, data, "tok")
	h.env["TROUPE_STORE"] = url

	h.roster()
	h.ok("inbox", "send", "--team", "alpha", "--to", "bob", "--from", "alice", "hello over nats")
	if out := h.ok("inbox", "read", "--team", "alpha", "--agent", "bob"); !strings.Contains(out, "hello over nats") {
		t.Errorf("inbox read = %q; want the message", out)
	}
	h.ok("task", "create", "--team", "alpha", "--subject", "ship it")
	h.ok("task", "claim", "--team", "alpha", "--agent", "bob", "1")
	var task map[string]any
	h.json(&task, "task", "get", "--team", "alpha", "1")
	if task["owner"] != "bob" || task["status"] != "in_progress" {
		t.Errorf("task 1 = %v; want owned by bob, in progress", task)
	}

	// inbox watch wakes on a push from the server.
	watch := newSyncBuffer()
	stopWatch := h.runAsync(watch, "inbox", "watch", "--team", "alpha", "--agent", "alice")
	h.ok("inbox", "send", "--team", "alpha", "--to", "alice", "--from", "bob", "ping through a watch")
	watch.waitFor(t, "the watched message", func(s string) bool { return strings.Contains(s, "ping through a watch") })
	if err := stopWatch(); err != nil {
		t.Errorf("inbox watch ended with %v", err)
	}

	// The --store flag wins over the environment; bad values are usage
	// errors; a wrong token is refused, naming the server.
	if err := h.fail("--store", "ftp://x:1", "team", "list"); !isUsage(err) || !strings.Contains(err.Error(), "ftp") {
		t.Errorf("--store ftp://x:1 error = %v; want a usage error naming the value", err)
	}
	if err := h.fail("--store", "nowhere", "team", "list"); !isUsage(err) {
		t.Errorf("--store nowhere error = %v; want a usage error", err)
	}
	if err := h.fail("--nats-token", "wrong", "team", "list"); !strings.Contains(err.Error(), url) || !strings.Contains(strings.ToLower(err.Error()), "authorization") {
		t.Errorf("wrong token error = %v; want an authorization error naming %s", err, url)
	}

	if err := stop(); err != nil {
		t.Fatalf("troupe serve ended with %v; want nil after cancel", err)
	}
	if err := h.fail("team", "list"); !strings.Contains(err.Error(), url) {
		t.Errorf("team list with the server stopped error = %v; want it to name %s", err, url)
	}

	// Same data folder, new server: everything is still there.
	url2, stop2 := serveAsync(t, h, data, "tok")
	defer stop2()
	h.env["TROUPE_STORE"] = url2
	var teams []map[string]any
	h.json(&teams, "team", "list")
	if len(teams) != 1 || teams[0]["name"] != "alpha" {
		out, _ := json.Marshal(teams)
		t.Errorf("team list after a restart = %s; want alpha", out)
	}
	if out := h.ok("inbox", "read", "--team", "alpha", "--agent", "bob"); !strings.Contains(out, "hello over nats") {
		t.Errorf("inbox read after a restart = %q; want the message", out)
	}
}

func TestServeRefusesBadAddr(t *testing.T) {
	h := &harness{t: t, home: t.TempDir(), env: map[string]string{}, openStore: cli.OpenFileStore}
	for _, addr := range []string{"nonsense", "127.0.0.1:99999", "127.0.0.1:x"} {
		if err := h.fail("serve", "--addr", addr, "--data", t.TempDir()); !isUsage(err) || !strings.Contains(err.Error(), addr) {
			t.Errorf("serve --addr %q error = %v; want a usage error naming it", addr, err)
		}
	}
	for _, sync := range []string{"sometimes", "0s", "-1m"} {
		if err := h.fail("serve", "--addr", "127.0.0.1:0", "--sync", sync, "--data", t.TempDir()); !isUsage(err) || !strings.Contains(err.Error(), sync) {
			t.Errorf("serve --sync %q error = %v; want a usage error naming it", sync, err)
		}
	}
}
