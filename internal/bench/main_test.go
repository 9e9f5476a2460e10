package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"testing"
	"time"
)

// childEnv makes the test binary play a bench child (RunChild with its
// last argument) instead of running the tests.
const childEnv = "TROUPE_BENCH_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		if err := (Child{Teammate: testTeammate}).Run(context.Background(), os.Args[len(os.Args)-1], os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

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
