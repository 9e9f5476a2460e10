package bench_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/troupe-dev/troupe/bench"
	"github.com/troupe-dev/troupe/session/kit"
	"github.com/troupe-dev/troupe/team"
)

// TestMain makes the test binary a bench child when the tests start it as
// one, with the teammates troupe bench team runs (kit.BenchTeammate). It
// is in the external test package: the kit imports bench.
func TestMain(m *testing.M) {
	if os.Getenv(bench.ChildTestEnv) == "1" {
		teammate := kit.BenchTeammate
		if os.Getenv(deafEnv) == "1" {
			teammate = deafTeammate
		}
		if err := (bench.Child{Teammate: teammate}).Run(context.Background(), os.Args[len(os.Args)-1], os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// deafEnv, set to "1" beside bench.ChildTestEnv, makes a team host's
// teammates deaf (deafTeammate).
const deafEnv = "TROUPE_BENCH_TEST_DEAF"

// deafTeammate is a teammate that goes idle once and then never reads its
// inbox: every ping to it is missed.
func deafTeammate(ctx context.Context, s bench.TeammateSpec) error {
	if err := team.SetActive(ctx, s.Teams, s.Team, s.Name, false); err != nil {
		return err
	}
	s.OnIdle()
	<-ctx.Done()
	return nil
}
