package lockfile

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/internal/atomicfile"
	"github.com/troupe-dev/troupe/internal/dirwatch"
	"github.com/troupe-dev/troupe/internal/logtest"
)

// childEnv selects a child role when the test binary is re-executed.
const childEnv = "TROUPE_LOCKFILE_CHILD"

// waitFor bounds every wait for an event in these tests.
const waitFor = 20 * time.Second

// testStale is the stale time of the fault tests, the minimum, to stay fast.
const testStale = MinStale

func TestMain(m *testing.M) {
	if role := os.Getenv(childEnv); role != "" {
		os.Exit(runChild(role, os.Args[1:]))
	}
	// The slow tests here mostly wait (for stale periods, or for a hold to
	// last), so run them all at once even where GOMAXPROCS, the default
	// -test.parallel, is 2. An explicit -test.parallel wins.
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		flag.Set("test.parallel", "8")
	}
	os.Exit(m.Run())
}

// runChild runs one child role and returns its exit code. Children report
// on stdout, one line per event, and take commands from stdin.
func runChild(role string, args []string) int {
	// Warnings go to stderr, which failing tests print.
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	w, err := dirwatch.New(dirwatch.Options{Logger: logger})
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	defer w.Close()
	switch role {
	case "counter": // args: dir counter marker n
		n, _ := strconv.Atoi(args[3])
		for range n {
			if err := incrementUnderLock(args[0], args[1], args[2], Options{Watcher: w, Logger: logger}); err != nil {
				fmt.Println("error", err)
				return 1
			}
		}
		fmt.Println("done")
		return 0
	case "holder": // args: dir [stale]
		stale := testStale
		if len(args) > 1 {
			stale, _ = time.ParseDuration(args[1])
		}
		return runHolder(args[0], Options{Stale: stale, Watcher: w, Logger: logger})
	case "reclaimer": // args: dir marker; one round per "go" line on stdin
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			err := holdBriefly(args[0], args[1], Options{Stale: testStale, Watcher: w, Logger: logger})
			fmt.Println("done", errString(err))
		}
		return 0
	}
	fmt.Println("error unknown role", role)
	return 2
}

// runHolder takes the lock, reports "held", then obeys stdin commands.
func runHolder(dir string, o Options) int {
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	l, err := Acquire(ctx, dir, o)
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	fmt.Println("held")
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch f[0] {
		case "verify":
			fmt.Println("verify", errString(l.Verify()))
		case "commit": // commit PATH DATA: write under the lock, as a mailbox would
			err := atomicfile.WriteFile(f[1], []byte(f[2]), 0o644, atomicfile.Options{BeforeCommit: l.Verify})
			fmt.Println("commit", errString(err))
		case "lost":
			select {
			case <-l.Lost():
				fmt.Println("lost closed")
			default:
				fmt.Println("lost open")
			}
		case "release":
			fmt.Println("release", errString(l.Release()))
		case "exit":
			return 0
		}
	}
	return 0
}

// errString sums up an error for a child's report line.
func errString(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, ErrCompromised):
		return "compromised"
	case errors.Is(err, errOverlap):
		return "overlap"
	}
	return "error " + err.Error()
}

// errOverlap means two holders were inside the critical section at once.
var errOverlap = errors.New("two holders at once")

// enter marks the critical section with an exclusive marker file: if the
// marker exists, another holder is inside.
func enter(marker string) error {
	f, err := os.OpenFile(marker, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return errOverlap
	}
	if err != nil {
		return err
	}
	return f.Close()
}

func leave(marker string) error { return os.Remove(marker) }

// holdBriefly acquires dir, enters and leaves the critical section, and
// releases.
func holdBriefly(dir, marker string, o Options) error {
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	l, err := Acquire(ctx, dir, o)
	if err != nil {
		return err
	}
	if err := enter(marker); err != nil {
		l.Release()
		return err
	}
	err = l.Verify()
	if lerr := leave(marker); err == nil {
		err = lerr
	}
	if rerr := l.Release(); err == nil {
		err = rerr
	}
	return err
}

// incrementUnderLock adds one to the decimal counter in file under the lock.
func incrementUnderLock(dir, file, marker string, o Options) error {
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	l, err := Acquire(ctx, dir, o)
	if err != nil {
		return err
	}
	defer l.Release()
	if err := enter(marker); err != nil {
		return err
	}
	b, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	n, _ := strconv.Atoi(string(b))
	if err := l.Verify(); err != nil {
		return err
	}
	if err := os.WriteFile(file, []byte(strconv.Itoa(n+1)), 0o644); err != nil {
		return err
	}
	if err := leave(marker); err != nil {
		return err
	}
	return l.Release()
}

// child is a running child process of the test binary.
type child struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string // stdout, one line each; closed at EOF
	stderr *syncBuffer
}

// startChild re-executes the test binary in role with args. The child is
// killed, if still running, when the test ends.
func startChild(t *testing.T, role string, args ...string) *child {
	t.Helper()
	return startProcess(t, exec.Command(os.Args[0], args...), childEnv+"="+role)
}

// startProcess starts cmd with extra environment and line-wise stdout.
func startProcess(t *testing.T, cmd *exec.Cmd, env ...string) *child {
	t.Helper()
	cmd.Env = append(os.Environ(), env...)
	c := &child{t: t, cmd: cmd, lines: make(chan string, 100), stderr: &syncBuffer{}}
	cmd.Stderr = c.stderr
	var err error
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var readers sync.WaitGroup
	readers.Go(func() {
		defer close(c.lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
	})
	t.Cleanup(func() {
		c.stdin.Close()
		cmd.Process.Kill()
		readers.Wait()
		cmd.Wait()
	})
	return c
}

// syncBuffer collects output written and read concurrently.
type syncBuffer = logtest.Buffer

// send writes one command line to the child.
func (c *child) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.stdin, line+"\n"); err != nil {
		c.t.Fatalf("send %q to child: %v", line, err)
	}
}

// expect waits for the child's next line and fails unless it is want.
func (c *child) expect(want string) {
	c.t.Helper()
	if got := c.next(); got != want {
		c.t.Fatalf("child said %q; want %q (stderr: %s)", got, want, c.stderr.String())
	}
}

// next returns the child's next line.
func (c *child) next() string {
	c.t.Helper()
	select {
	case line, ok := <-c.lines:
		if !ok {
			c.t.Fatalf("child exited early (stderr: %s)", c.stderr.String())
		}
		return line
	case <-time.After(waitFor):
		c.t.Fatalf("no line from child within %v (stderr: %s)", waitFor, c.stderr.String())
	}
	return ""
}

// wait waits for the child's exit and fails unless it exited with code 0.
func (c *child) wait() {
	c.t.Helper()
	c.stdin.Close()
	for range c.lines {
	}
	if err := c.cmd.Wait(); err != nil {
		c.t.Errorf("child exit: %v (stderr: %s)", err, c.stderr.String())
	}
}
