package kit

import (
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/team"
)

// PruneOutputDir removes a task output folder (<tmp>/troupe-<uid>/<project>/
// <session>/tasks) when the run left nothing in it, and then its session
// and project folders when they are empty too: a run that started no
// background task leaves no trace in the temporary folder. Output files
// of tasks that ran are kept.
func PruneOutputDir(dir string) {
	for range 3 {
		if os.Remove(dir) != nil {
			return
		}
		dir = filepath.Dir(dir)
	}
}

// ProjectSlug names a working folder in the output folder's path.
func ProjectSlug(cwd string) string {
	return strings.Trim(strings.Map(func(r rune) rune {
		if r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			return r
		}
		return '-'
	}, cwd), "-")
}

// Stores are the team's stores an agent of the team works on.
type Stores struct {
	Teams team.Store
	Mail  mailbox.Store
	Tasks tasklist.Store
}
