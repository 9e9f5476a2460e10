package demo

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/troupe-dev/troupe/team"
)

// Teams lists the teams left in the store (team.Store's List).
type Teams interface {
	List(ctx context.Context) ([]team.Config, error)
}

// Check verifies the outcome and returns the problems found: the files
// of the project changed as planned, its tests pass, the lead deleted
// the team (deleted says it did, since the removal at the end of the run
// would hide a lead that did not), and no team is left in teams (not
// looked at when teams is nil).
func Check(ctx context.Context, project string, deleted bool, teams Teams) []string {
	var problems []string
	if !deleted {
		problems = append(problems, "the lead did not delete its team with TeamDelete")
	}
	for _, f := range []struct{ file, want string }{{"calc.go", "func Sub(a, b int) int"}, {"calc_test.go", "func TestSub"}, {"README.md", "`Sub(a, b)`"}} {
		b, err := os.ReadFile(filepath.Join(project, f.file))
		if err != nil || !bytes.Contains(b, []byte(f.want)) {
			problems = append(problems, fmt.Sprintf("%s does not contain %q", f.file, f.want))
		}
	}
	c := exec.CommandContext(ctx, "go", "test", "./...")
	c.Dir = project
	if out, err := c.CombinedOutput(); err != nil {
		problems = append(problems, fmt.Sprintf("go test in the project failed: %v: %s", err, bytes.TrimSpace(out)))
	}
	if teams == nil {
		return problems
	}
	left, err := teams.List(ctx)
	if err != nil {
		problems = append(problems, "list teams: "+err.Error())
	}
	for _, t := range left {
		problems = append(problems, fmt.Sprintf("team %q was not deleted (members: %s)", t.Name, strings.Join(t.Names(), ", ")))
	}
	return problems
}
