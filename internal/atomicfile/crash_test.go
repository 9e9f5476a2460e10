package atomicfile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// childEnv selects a child role when the test binary is re-executed.
const childEnv = "TROUPE_ATOMICFILE_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "rewriter" {
		os.Exit(runRewriter(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// runRewriter is the child of TestCrashDuringWrite: it rewrites the file
// given as args[0] with versions 1, 2, … of size args[1] until killed.
func runRewriter(args []string) int {
	if len(args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: rewriter PATH SIZE")
		return 2
	}
	size, err := strconv.Atoi(args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Println("writing")
	for v := 1; ; v++ {
		if err := WriteFile(args[0], makeDoc(v, size), 0o644, Options{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Println("committed")
	}
}

// makeDoc returns version v of a JSON document of exactly size bytes. The
// padding letter depends on v, so a mix of two versions cannot pass as one.
func makeDoc(v, size int) []byte {
	head := fmt.Sprintf(`{"version":%d,"pad":"`, v)
	const tail = `"}`
	var b bytes.Buffer
	b.Grow(size)
	b.WriteString(head)
	b.Write(bytes.Repeat([]byte{byte('a' + v%26)}, size-len(head)-len(tail)))
	b.WriteString(tail)
	return b.Bytes()
}

// TestCrashDuringWrite is R3 of docs/benchmarks.md: a writer killed with SIGKILL at
// a random moment never leaves an invalid or torn target; 30 trials per
// size.
func TestCrashDuringWrite(t *testing.T) {
	const trials = 30
	sizes := []struct {
		name string
		size int
	}{
		{"400KB", 400 << 10},
		{"4MB", 4 << 20},
	}
	for _, sz := range sizes {
		t.Run(sz.name, func(t *testing.T) { crashTrials(t, sz.size, trials) })
	}
}

// crashTrials kills a rewriter of one file n times and checks the file
// after each kill.
func crashTrials(t *testing.T, size, n int) {
	dir := t.TempDir()
	path := filepath.Join(dir, "inbox.json")
	start := time.Now()
	if err := WriteFile(path, makeDoc(0, size), 0o644, Options{}); err != nil {
		t.Fatal(err)
	}
	// Kills land at a random moment within about two write periods after
	// the child starts writing: in any phase of its first or second write.
	// The period is re-measured on the child each trial, as load varies.
	period := time.Since(start)
	versions := map[int]int{} // version found after the kill -> trials
	for trial := range n {
		v, firstCommit := killRewriterOnce(t, path, size, 2*period)
		if v < 0 {
			t.Fatalf("trial %d: target invalid", trial)
		}
		if firstCommit > 0 {
			period = firstCommit
		}
		versions[v]++
	}
	// Crashed writers may leave temp files; the sweep removes them all.
	if _, err := SweepTemps(dir, "inbox.json", -time.Hour, time.Now()); err != nil {
		t.Fatalf("SweepTemps error: %v", err)
	}
	assertNoTemps(t, dir)
	t.Logf("%d trials; versions found after the kill (version: trials): %v", n, versions)
}

// killRewriterOnce starts a rewriter child, waits until it starts writing,
// kills it with SIGKILL at a random moment within window (so the kill lands
// in any phase of a write), and checks the target. It returns the version
// found (-1 after reporting an error) and, if the child committed before
// the kill, how long its first write took.
func killRewriterOnce(t *testing.T, path string, size int, window time.Duration) (version int, firstCommit time.Duration) {
	t.Helper()
	cmd := exec.Command(os.Args[0], path, strconv.Itoa(size))
	cmd.Env = append(os.Environ(), childEnv+"=rewriter")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan time.Time, 2) // when "writing" and the first "committed" arrived
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		sc := bufio.NewScanner(out)
		for n := 0; sc.Scan(); n++ {
			if n < 2 {
				lines <- time.Now()
			}
		}
	}()
	var writing time.Time
	select {
	case writing = <-lines:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-readDone
		cmd.Wait()
		t.Fatalf("rewriter did not start writing (stderr: %s)", stderr.String())
	}
	// The kill moment is the random variable of this test, not a wait.
	time.Sleep(time.Duration(rand.Int64N(int64(window) + 1)))
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-readDone
	cmd.Wait()
	if stderr.Len() > 0 {
		t.Errorf("rewriter stderr: %s", stderr.String())
	}
	select {
	case committed := <-lines:
		firstCommit = committed.Sub(writing)
	default:
	}
	return checkDoc(t, path, size), firstCommit
}

// checkDoc reports an error unless the file at path is exactly one complete
// version of makeDoc, and returns that version (-1 on error). makeDoc's
// output is valid JSON (TestMakeDocIsJSON), so a byte-exact match proves
// validity without a slow parse of every 4 MB file under the race detector.
func checkDoc(t *testing.T, path string, size int) int {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("ReadFile after kill: %v", err)
		return -1
	}
	v := -1
	if rest, ok := strings.CutPrefix(string(got[:min(len(got), 64)]), `{"version":`); ok {
		if i := strings.IndexByte(rest, ','); i > 0 {
			v, _ = strconv.Atoi(rest[:i])
		}
	}
	if v >= 0 && bytes.Equal(got, makeDoc(v, size)) {
		return v
	}
	t.Errorf("target after kill (%d bytes, valid JSON: %v) is not one complete version (header version %d)",
		len(got), json.Valid(got), v)
	return -1
}

func TestMakeDocIsJSON(t *testing.T) {
	for _, v := range []int{0, 1, 27, 12345} {
		doc := makeDoc(v, 1000)
		var got struct {
			Version int    `json:"version"`
			Pad     string `json:"pad"`
		}
		if err := json.Unmarshal(doc, &got); err != nil || got.Version != v || len(doc) != 1000 {
			t.Errorf("makeDoc(%d, 1000) = version %d, %d bytes, %v; want version %d, 1000 bytes, valid JSON",
				v, got.Version, len(doc), err, v)
		}
	}
}
