package bench

import (
	"io"
	"os"
	"testing"
	"time"
)

// childEnv makes the test binary play a bench child (TestMain, in
// child_main_test.go) instead of running the tests.
const childEnv = ChildTestEnv

// testRunner runs children from the test binary; progress goes to the test
// log.
func testRunner(t *testing.T) *Runner {
	t.Helper()
	return &Runner{
		Exe:           os.Args[0],
		ChildEnv:      []string{childEnv + "=1"},
		Start:         ExecStart,
		TempDir:       t.TempDir(),
		Progress:      testWriter{t},
		ProgressEvery: 200 * time.Millisecond,
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p[:len(p)-min(len(p), 1)]))
	return len(p), nil
}

var _ io.Writer = testWriter{}
