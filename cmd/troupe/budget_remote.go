package main

import (
	"fmt"

	"github.com/troupe-dev/troupe/internal/termtext"
	"github.com/troupe-dev/troupe/remote"
	"github.com/troupe-dev/troupe/session/streamjson"
)

// remoteSpent charges what a remote job spent (its result's usage by
// model, remote.ClientConfig.Spent) to the lead's session: one ledger
// line per model under the agent name <job id>@<worker>, priced at the
// lead's table, counted toward the session's limits (a limit reached
// asks the team to shut down, as any other spending does). A model entry
// that is not a usage is left out with a warning naming the job.
func (a *app) remoteSpent(out *streamjson.Writer) func(remote.Job, string, []remote.ModelUsage) {
	return func(j remote.Job, worker string, models []remote.ModelUsage) {
		meter := out.Meter
		if meter == nil {
			return
		}
		name := j.ID
		if worker != "" {
			name += "@" + worker
		}
		for _, m := range models {
			if err := m.Check(); err != nil {
				out.Notice(a.Stderr, fmt.Sprintf("troupe: warning: remote job %s: %s; not counted", j.ID, termtext.Clean(err.Error()))) // the team's timeline writes there too
				continue
			}
			_ = meter.Add(name, m.Model, m.Usage) // a limit reached calls the meter's OnExceeded
		}
	}
}
