package remote

import (
	"fmt"
	"strings"

	"github.com/troupe-dev/troupe/team"
)

// ParseLabels parses a comma-separated label list (blank entries
// skipped) and checks it as CheckLabels does.
func ParseLabels(list string) ([]string, error) {
	var out []string
	for l := range strings.SplitSeq(list, ",") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	if err := CheckLabels(out); err != nil {
		return nil, err
	}
	return out, nil
}

// DefaultName is the name of a worker that was given none:
// <host>-<pid>, the host made a valid name and cut so that a long one
// still fits.
func DefaultName(host string, pid int) string {
	suffix := fmt.Sprintf("-%d", pid)
	h := team.SanitizePath(host)
	return h[:min(len(h), 64-len(suffix))] + suffix
}

// String describes the event in one line for a worker's log: a result
// with its usage or error, else the kind, attempt and text.
func (e Event) String() string {
	if e.Kind == EventResult && e.Result != nil {
		if e.Result.Error != "" {
			return fmt.Sprintf("job %s failed: %s", e.JobID, e.Result.Error)
		}
		return fmt.Sprintf("job %s done (%d tokens, %d tool uses)", e.JobID, e.Usage.TotalTokens, e.Usage.ToolUses)
	}
	return fmt.Sprintf("job %s %s (attempt %d) %s", e.JobID, e.Kind, e.Attempt, e.Text)
}
