package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/cli"
	"github.com/troupe-dev/troupe/permission/settings"

	"github.com/troupe-dev/troupe/store/mem"
)

// backends are the stores every command test runs against: the real file
// store in a temporary --home, and the in-memory store.
var backends = []struct {
	name string
	open func(t *testing.T) func(home string) (Stores, error)
}{
	{"file", func(t *testing.T) func(string) (Stores, error) { return cli.OpenFileStore }},
	{"mem", func(t *testing.T) func(string) (Stores, error) {
		s := mem.New(mem.Options{})
		t.Cleanup(func() { s.Close() })
		return func(string) (Stores, error) {
			// One store for the whole test: Close is left to the cleanup.
			return Stores{Teams: s.Teams(), Mail: s.Mail(), Tasks: s.Tasks()}, nil
		}
	}},
}

// harness runs troupe commands in-process against one store.
type harness struct {
	t         *testing.T
	home      string
	openStore func(home string) (Stores, error)
	env       map[string]string
	// untrusted leaves the temporary folder untrusted (trust_test.go);
	// otherwise the first command trusts it (trustTemp).
	untrusted bool
	trustOnce sync.Once
}

// trustTemp trusts the temporary folder, where the tests make their
// projects, in home's trust store, as a person would with troupe trust:
// the tests run in folders they wrote themselves. The trust tests
// (trust_test.go) use homes without it.
func trustTemp(t testing.TB, home string) {
	t.Helper()
	if err := settings.Trust(home).Trust(context.Background(), os.TempDir(), nil); err != nil {
		t.Fatal(err)
	}
}

// trust trusts the temporary folder in the harness's home, once.
func (h *harness) trust() {
	h.trustOnce.Do(func() {
		if !h.untrusted {
			trustTemp(h.t, h.home)
		}
	})
}

// forEachStore runs f once per backend, each with a fresh --home.
func forEachStore(t *testing.T, f func(t *testing.T, h *harness)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			f(t, &harness{t: t, home: t.TempDir(), openStore: b.open(t), env: map[string]string{}})
		})
	}
}

// result is what one command printed and returned.
type result struct {
	stdout, stderr string
	err            error
}

func (h *harness) main(stdin io.Reader, stdout, stderr io.Writer) *Main {
	return &Main{
		Stdin:     stdin,
		Stdout:    stdout,
		Stderr:    stderr,
		Getenv:    func(k string) string { return h.env[k] },
		HomeDir:   func() (string, error) { return h.home, nil },
		OpenStore: h.openStore,
		Version:   "v0.0.0-test",
	}
}

// exec runs troupe --home HOME args... with stdin.
func (h *harness) exec(stdin string, args ...string) result {
	h.t.Helper()
	var out, errOut bytes.Buffer
	m := h.main(strings.NewReader(stdin), &out, &errOut)
	h.trust()
	err := m.Run(h.t.Context(), append([]string{"--home", h.home}, args...))
	return result{out.String(), errOut.String(), err}
}

// ok runs a command that must succeed and returns its stdout.
func (h *harness) ok(args ...string) string {
	h.t.Helper()
	r := h.exec("", args...)
	if r.err != nil {
		h.t.Fatalf("troupe %s: %v (stderr %q)", strings.Join(args, " "), r.err, r.stderr)
	}
	return r.stdout
}

// json runs a command with --json that must succeed and decodes its
// output into v.
func (h *harness) json(v any, args ...string) {
	h.t.Helper()
	out := h.ok(append([]string{"--json"}, args...)...)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		h.t.Fatalf("troupe --json %s: output is not JSON for %T: %v\n%s", strings.Join(args, " "), v, err, out)
	}
}

// fail runs a command that must fail and returns its error.
func (h *harness) fail(args ...string) error {
	h.t.Helper()
	r := h.exec("", args...)
	if r.err == nil {
		h.t.Fatalf("troupe %s succeeded; want an error\nstdout: %s", strings.Join(args, " "), r.stdout)
	}
	return r.err
}

// roster creates team "alpha" with members alice and bob.
func (h *harness) roster() {
	h.t.Helper()
	h.ok("team", "create", "alpha", "--description", "the first team")
	h.ok("team", "add", "alpha", "alice", "--model", "opus", "--agent-type", "general-purpose")
	h.ok("team", "add", "alpha", "bob", "--color", "green")
}

func isUsage(err error) bool {
	var ue *UsageError
	return errors.As(err, &ue)
}

// syncBuffer is an io.Writer safe for a writer and a reader goroutine that
// signals every write, so a test can wait for output without sleeping.
type syncBuffer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	wrote chan struct{} // 1-slot, coalesced
}

func newSyncBuffer() *syncBuffer { return &syncBuffer{wrote: make(chan struct{}, 1)} }

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	n, err := b.buf.Write(p)
	b.mu.Unlock()
	select {
	case b.wrote <- struct{}{}:
	default:
	}
	return n, err
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitFor waits until cond holds for the buffer's contents, or fails the
// test after the deadline.
func (b *syncBuffer) waitFor(t *testing.T, what string, cond func(string) bool) string {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		if s := b.String(); cond(s) {
			return s
		}
		select {
		case <-b.wrote:
		case <-deadline:
			t.Fatalf("timed out waiting for %s; output so far:\n%s", what, b.String())
		}
	}
}

// runAsync runs a command in a goroutine until ctx is canceled; the
// returned function cancels it and returns its error.
func (h *harness) runAsync(out io.Writer, args ...string) (stop func() error) {
	ctx, cancel := context.WithCancel(h.t.Context())
	var errOut bytes.Buffer
	done := make(chan error, 1)
	m := h.main(strings.NewReader(""), out, &errOut)
	h.trust()
	go func() { done <- m.Run(ctx, append([]string{"--home", h.home}, args...)) }()
	return func() error {
		cancel()
		return <-done
	}
}

// troupe --help shows the flags by section and hides the teammate
// processes' internal flags, which stay accepted.
func TestRootHelpGrouped(t *testing.T) {
	var out bytes.Buffer
	m := &Main{Stdout: &out, Stderr: &out}
	if err := m.Run(t.Context(), []string{"--help"}); err != nil {
		t.Fatal(err)
	}
	help := out.String()
	for _, want := range []string{"Running one agent (-p):", "Permissions:", "Agent teams and coordinator mode:", "Stores (every command):", "--keep-team"} {
		if !strings.Contains(help, want) {
			t.Errorf("troupe --help lacks %q:\n%s", want, help)
		}
	}
	for _, name := range internalFlags {
		if strings.Contains(help, "--"+name+" ") {
			t.Errorf("troupe --help shows the internal flag --%s", name)
		}
	}
	for _, g := range flagGroups {
		if strings.Count(help, "\n"+g.Title+":") != 1 {
			t.Errorf("section %q is not shown once", g.Title)
		}
	}
	out.Reset()
	if err := m.Run(t.Context(), []string{"team", "--help"}); err != nil || !strings.Contains(out.String(), "Global Flags:") {
		t.Errorf("troupe team --help: %v\n%s", err, out.String())
	}
}
