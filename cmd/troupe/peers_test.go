package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/troupe-dev/troupe/peer"
)

// peerBinary builds troupe once for the tests that run sessions as real
// processes.
var peerBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "troupe-peer-bin")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "troupe")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

// peerProc is one troupe process of a peer test.
type peerProc struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	done           chan error
}

// startPeer starts troupe with args under home; it is killed when t ends.
func startPeer(t *testing.T, home string, env []string, args ...string) *peerProc {
	t.Helper()
	bin, err := peerBinary()
	if err != nil {
		t.Skip(err)
	}
	p := &peerProc{done: make(chan error, 1)}
	p.cmd = exec.CommandContext(t.Context(), bin, args...)
	p.cmd.Env = append(append(os.Environ(), "TROUPE_HOME="+home, "HOME="+home), env...)
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

func (p *peerProc) wait(t *testing.T) {
	t.Helper()
	select {
	case err := <-p.done:
		p.done <- err
		if err != nil {
			t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", p.cmd.Args, err, p.stdout.String(), p.stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("%s did not end\nstderr:\n%s", p.cmd.Args, p.stderr.String())
	}
}

// waitEntry waits until `troupe sessions --json` lists a session named
// name, and returns it.
func waitEntry(t *testing.T, home string, env []string, name string) peer.Entry {
	t.Helper()
	bin, err := peerBinary()
	if err != nil {
		t.Skip(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		c := exec.CommandContext(t.Context(), bin, "sessions", "--json")
		c.Env = append(append(os.Environ(), "TROUPE_HOME="+home, "HOME="+home), env...)
		out, err := c.Output()
		if err == nil {
			var es []peer.Entry
			if json.Unmarshal(out, &es) == nil {
				for _, e := range es {
					if e.Name == name {
						return e
					}
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no session %s listed", name)
	return peer.Entry{}
}

// waiterScript is a session that runs one shell command waiting for the
// file gate, then answers what it was sent.
func waiterScript(t *testing.T, dir, gate string) string {
	t.Helper()
	s := fmt.Sprintf(`{"turns":[
 {"match":{"turn":0},"reply":{"text":"waiting","tool_calls":[{"name":"Bash","input":{"command":"for i in $(seq 600); do [ -f %s ] && exit 0; sleep 0.1; done"}}]}},
 {"match":{"user":"cross-session-message"},"reply":{"text":"GOT PEER MESSAGE"}},
 {"match":{},"reply":{"text":"NO PEER MESSAGE"}}
]}`, gate)
	p := filepath.Join(dir, "waiter.json")
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// senderScript lists the agents, then sends to each of to in turn.
func senderScript(t *testing.T, dir string, to ...string) string {
	t.Helper()
	turns := []string{`{"match":{"turn":0},"reply":{"text":"listing","tool_calls":[{"name":"ListAgents","input":{}}]}}`}
	for i, addr := range to {
		turns = append(turns, fmt.Sprintf(`{"match":{"turn":%d},"reply":{"text":"sending","tool_calls":[{"name":"SendMessage","input":{"to":%q,"message":"hello number %d"}}]}}`, i+1, addr, i+1))
	}
	turns = append(turns, `{"match":{},"reply":{"text":"SENT"}}`)
	p := filepath.Join(dir, "sender.json")
	if err := os.WriteFile(p, []byte(`{"turns":[`+strings.Join(turns, ",\n")+`]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Two troupe sessions on one machine: one finds the other with ListAgents
// and messages it by name and by uds:; the other takes both at its next
// turn boundary, shows them with their sender, and its entry and socket
// are gone when it ends.
func TestPeerSessionsOneMachine(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	trustTemp(t, home)
	gate := filepath.Join(dir, "gate")
	common := []string{"-p", "--provider", "scripted", "--output-format", "stream-json", "--dangerously-skip-permissions"}
	b := startPeer(t, home, nil, append(common, "--cwd", dir, "--name", "beta", "--script", waiterScript(t, dir, gate), "wait")...)
	eb := waitEntry(t, home, nil, "beta")
	if eb.Socket == "" || eb.Kind != peer.KindPrint || !eb.Peers {
		t.Fatalf("beta's entry = %+v", eb)
	}
	a := startPeer(t, home, nil, append(common, "--cwd", dir, "--name", "alpha", "--script", senderScript(t, dir, "beta", "uds:"+eb.Socket), "go")...)
	a.wait(t)
	if out := a.stdout.String(); !strings.Contains(out, `beta [`+peer.Short(eb.ID)+`] session`) || strings.Count(out, "Message delivered") != 2 {
		t.Fatalf("alpha's run:\n%s\nstderr:\n%s", out, a.stderr.String())
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	b.wait(t)
	out := b.stdout.String()
	if n := strings.Count(out, `"subtype":"cross_session_message"`); n != 2 || !strings.Contains(out, `"from":"alpha@`) || !strings.Contains(out, "GOT PEER MESSAGE") {
		t.Fatalf("beta got %d peer events:\n%s", n, out)
	}
	if _, err := os.Lstat(eb.Socket); !os.IsNotExist(err) {
		t.Errorf("beta's socket after its end: %v", err)
	}
	if ents, _ := os.ReadDir(filepath.Join(home, "sessions", "live")); len(ents) != 0 {
		t.Errorf("entries left after both ended: %v", ents)
	}
}

// A session with --no-peer-messages is listed but refuses.
func TestPeerSessionsRefuse(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	trustTemp(t, home)
	gate := filepath.Join(dir, "gate")
	common := []string{"-p", "--provider", "scripted", "--output-format", "stream-json", "--dangerously-skip-permissions"}
	b := startPeer(t, home, nil, append(common, "--cwd", dir, "--name", "quiet", "--no-peer-messages", "--script", waiterScript(t, dir, gate), "wait")...)
	eq := waitEntry(t, home, nil, "quiet")
	if eq.Peers {
		t.Fatalf("entry of a --no-peer-messages session says it takes them: %+v", eq)
	}
	a := startPeer(t, home, nil, append(common, "--cwd", dir, "--script", senderScript(t, dir, "uds:"+eq.Socket), "go")...)
	a.wait(t)
	if out := a.stdout.String(); !strings.Contains(out, "takes no messages from other sessions") {
		t.Fatalf("sender's run:\n%s", out)
	}
	os.WriteFile(gate, nil, 0o600)
	b.wait(t)
	if out := b.stdout.String(); strings.Contains(out, "cross_session_message") || !strings.Contains(out, "NO PEER MESSAGE") {
		t.Fatalf("a refusing session got the message:\n%s", out)
	}
}

// Two "hosts" (two homes) on one NATS server: one messages the other by
// bridge:, and the other takes it.
func TestPeerSessionsBridge(t *testing.T) {
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("NATS server not ready")
	}
	defer srv.Shutdown()
	env := []string{"TROUPE_STORE=" + fmt.Sprintf("nats://127.0.0.1:%d", srv.Addr().(*net.TCPAddr).Port), "TROUPE_NATS_NAMESPACE=peers"}
	dir := t.TempDir()
	homeA, homeB := filepath.Join(dir, "ha"), filepath.Join(dir, "hb")
	trustTemp(t, homeA)
	trustTemp(t, homeB)
	gate := filepath.Join(dir, "gate")
	common := []string{"-p", "--provider", "scripted", "--output-format", "stream-json", "--dangerously-skip-permissions"}
	b := startPeer(t, homeB, env, append(common, "--cwd", dir, "--name", "far", "--script", waiterScript(t, dir, gate), "wait")...)
	ef := waitEntry(t, homeA, env, "far") // listed from the other home: the NATS registry
	a := startPeer(t, homeA, env, append(common, "--cwd", dir, "--name", "near", "--script", senderScript(t, dir, "bridge:"+ef.ID), "go")...)
	a.wait(t)
	if out := a.stdout.String(); !strings.Contains(out, "over the bridge") {
		t.Fatalf("near's run:\n%s\nstderr:\n%s", out, a.stderr.String())
	}
	os.WriteFile(gate, nil, 0o600)
	b.wait(t)
	if out := b.stdout.String(); !strings.Contains(out, `"subtype":"cross_session_message"`) || !strings.Contains(out, "GOT PEER MESSAGE") {
		t.Fatalf("far's run:\n%s", out)
	}
}
