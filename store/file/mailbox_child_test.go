package file

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/internal/lockfile"
	"github.com/troupe-dev/troupe/internal/logtest"
	"github.com/troupe-dev/troupe/mailbox"
)

// Mailbox child processes: a test re-executes its own binary with mbChildEnv
// set to a JSON mbSpec and -test.run=TestMailChild. The child reports lines
// starting with "mb " on stdout and may wait for lines on stdin.

const mbChildEnv = "TROUPE_MB_CHILD"

type mbSpec struct {
	Role      string        `json:"role"` // send, hold, stale-writer
	Root      string        `json:"root"`
	From      string        `json:"from"`
	To        string        `json:"to"`
	N         int           `json:"n"`
	LockStale time.Duration `json:"lockStale"`
}

type mbChild struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
	errb  logtest.Buffer
}

func (c *mbChild) Write(p []byte) (int, error) { return c.errb.Write(p) }

func (c *mbChild) stderr() string { return c.errb.String() }

// mbStart starts a child playing spec.
func mbStart(t *testing.T, spec mbSpec) *mbChild {
	t.Helper()
	b, _ := json.Marshal(spec)
	cmd := exec.Command(os.Args[0], "-test.run=^TestMailChild$", "-test.v=false")
	cmd.Env = append(os.Environ(), mbChildEnv+"="+string(b))
	c := &mbChild{cmd: cmd, lines: make(chan string, 4096)}
	cmd.Stderr = c
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if l, ok := strings.CutPrefix(sc.Text(), "mb "); ok {
				c.lines <- l
			}
		}
	}()
	t.Cleanup(func() {
		c.cmd.Process.Kill()
		c.cmd.Wait()
	})
	return c
}

// expect waits for the next line from the child and checks its prefix.
func (c *mbChild) expect(t *testing.T, prefix string) string {
	t.Helper()
	select {
	case l, ok := <-c.lines:
		if !ok {
			t.Fatalf("child exited before %q; stderr:\n%s", prefix, c.stderr())
		}
		if !strings.HasPrefix(l, prefix) {
			t.Fatalf("child said %q; want a line starting %q; stderr:\n%s", l, prefix, c.stderr())
		}
		return l
	case <-time.After(60 * time.Second):
		t.Fatalf("child did not say %q within 60s; stderr:\n%s", prefix, c.stderr())
	}
	return ""
}

// TestMailChild is the body of a child process; it does nothing in a normal
// run.
func TestMailChild(t *testing.T) {
	raw := os.Getenv(mbChildEnv)
	if raw == "" {
		t.Skip("child process role only")
	}
	var spec mbSpec
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		t.Fatal(err)
	}
	s, err := Open(spec.Root, Options{LockStale: spec.LockStale})
	if err != nil {
		fmt.Printf("mb err %v\n", err)
		os.Exit(1)
	}
	ctx := t.Context()
	in := bufio.NewScanner(os.Stdin)
	inbox := s.inboxPath("crew", spec.To)
	switch spec.Role {
	case "send":
		for i := 0; spec.N < 0 || i < spec.N; i++ {
			d, err := s.Mail().Send(ctx, "crew", spec.To, mailbox.Message{From: spec.From, Text: fmt.Sprintf("%s#%d", spec.From, i)})
			if err != nil {
				fmt.Printf("mb err %v\n", err)
				continue
			}
			fmt.Printf("mb sent %s %d\n", d[0].ID, i)
		}
		fmt.Println("mb done")
	case "hold":
		lk, err := lockfile.Acquire(ctx, inbox+".lock", s.lockOptions())
		if err != nil {
			fmt.Printf("mb err %v\n", err)
			os.Exit(1)
		}
		_ = lk
		fmt.Println("mb held")
		in.Scan() // hold until killed
	case "stale-writer":
		if err := ensureInbox(inbox); err != nil {
			fmt.Printf("mb err %v\n", err)
			os.Exit(1)
		}
		lk, err := lockfile.Acquire(ctx, inbox+".lock", s.lockOptions())
		if err != nil {
			fmt.Printf("mb err %v\n", err)
			os.Exit(1)
		}
		spool := s.Mail().spoolDir("crew", spec.To)
		os.MkdirAll(spool, 0o755)
		doc, err := s.Mail().loadLocked("crew", spec.To, inbox, spool, true)
		if err != nil {
			fmt.Printf("mb err %v\n", err)
			os.Exit(1)
		}
		fmt.Println("mb loaded")
		in.Scan() // the parent pauses us here, then says go
		msg, _ := mailbox.Prepare(mailbox.Message{From: spec.From, Text: "stale snapshot"}, time.Now())
		b, _ := json.Marshal(msg)
		doc.append([][]byte{b}, 100)
		if err := s.Mail().commitLocked(lk, doc, inbox, spool); err != nil {
			fmt.Printf("mb commit-refused %v\n", err)
		} else {
			fmt.Println("mb commit-ok")
		}
		lk.Release()
	}
	s.Close()
	os.Exit(0)
}
