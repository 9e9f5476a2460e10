package worktree

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// parseState reads a repository without commits and an upstream.
func TestParseState(t *testing.T) {
	for out, want := range map[string]State{
		"## No commits yet on main\n?? a\n": {Repo: true, Branch: "main", Status: []string{"?? a"}},
		"## dev...origin/dev [ahead 1]\n":   {Repo: true, Branch: "dev"},
		"## HEAD (no branch)\n M x.go\n":    {Repo: true, Status: []string{" M x.go"}},
		"":                                  {Repo: true},
	} {
		if diff := cmp.Diff(want, parseState(out)); diff != "" {
			t.Errorf("parseState(%q) mismatch (-want +got):\n%s", out, diff)
		}
	}
}
