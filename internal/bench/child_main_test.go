package bench_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/troupe-dev/troupe/internal/bench"
	"github.com/troupe-dev/troupe/session/kit"
)

// TestMain makes the test binary a bench child when the tests start it as
// one, with the teammates troupe bench team runs (kit.BenchTeammate). It
// is in the external test package: the kit imports bench.
func TestMain(m *testing.M) {
	if os.Getenv(bench.ChildTestEnv) == "1" {
		if err := (bench.Child{Teammate: kit.BenchTeammate}).Run(context.Background(), os.Args[len(os.Args)-1], os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
