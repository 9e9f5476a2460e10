package kit

import (
	"context"
	"strings"
	"time"

	"github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/telemetry"
)

// TaskMetrics records, with metrics on, the duration of every task of reg
// that ends, by its type and final status, and reports queue depths at
// each export (QueueDepths of the team that team names when asked; ""
// when there is none yet). Problems setting the gauges up go to warn. The
// returned function stops it; it does nothing with metrics off.
func TaskMetrics(tel *telemetry.Telemetry, reg *task.Registry, team func() (string, Stores), warn func(string)) func() {
	if !tel.Metrics() || reg == nil {
		return func() {}
	}
	err := tel.ObserveDepths(func(ctx context.Context) telemetry.Depths {
		name, st := team()
		return QueueDepths(ctx, reg, name, st)
	})
	if err != nil && warn != nil {
		warn(err.Error())
	}
	return reg.Follow(func(e task.Event) {
		if e.Kind == task.EventTerminated && !e.State.End.IsZero() {
			tel.TaskEnded(string(e.State.Type), string(e.State.Status), e.State.End.Sub(e.State.Start))
		}
	})
}

// QueueDepths is what waits in a lead's session: remote jobs not yet
// taken, and for the team teamName on st (its stores without the lead's
// signing, so that looking is no delivery) the unread mail of each member
// and the pending tasks of its list. A team that cannot be read counts
// nothing; the look gives up after five seconds.
func QueueDepths(ctx context.Context, reg *task.Registry, teamName string, st Stores) telemetry.Depths {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var d telemetry.Depths
	for _, s := range reg.List() {
		if s.Type == task.RemoteAgent && s.Status == task.Pending {
			d.Jobs++
		}
	}
	if teamName == "" || strings.HasPrefix(teamName, "\x00") || st.Teams == nil {
		return d
	}
	if cfg, err := st.Teams.Get(ctx, teamName); err == nil {
		d.Inboxes = map[string]int64{}
		for _, m := range cfg.Members {
			if msgs, err := st.Mail.Read(ctx, teamName, m.Name, true); err == nil {
				d.Inboxes[m.Name] = int64(len(msgs))
			}
		}
	}
	if ts, err := tasklist.New(st.Tasks, teamName).Tasks(ctx); err == nil {
		for _, t := range ts {
			if t.Status == tasklist.StatusPending {
				d.Tasks++
			}
		}
	}
	return d
}
