//go:build unix

package proctest

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
)

// CmdlinesHolding returns "pid: argv" for every process whose command line
// (/proc/<pid>/cmdline, which any local user can read) holds one of
// secrets; nil when none does, or when there is no /proc.
func CmdlinesHolding(secrets ...string) []string {
	paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var out []string
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // ended meanwhile
		}
		for _, s := range secrets {
			if bytes.Contains(b, []byte(s)) {
				pid := filepath.Base(filepath.Dir(p))
				out = append(out, pid+": "+strings.ReplaceAll(string(bytes.TrimRight(b, "\x00")), "\x00", " "))
				break
			}
		}
	}
	return out
}
