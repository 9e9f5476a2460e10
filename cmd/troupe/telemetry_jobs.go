package main

import (
	"context"
	"strings"
	"time"

	"github.com/troupe-dev/troupe/remote"
	"github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/telemetry"
)

// jobTrace is the lead's remote.ClientConfig.Trace: a job's submission
// is a span under the lead's current run, its context carried in the job;
// nil with telemetry off.
func (a *app) jobTrace() func(remote.Job) (string, func(error)) {
	if !a.tel.tel.Enabled() {
		return nil
	}
	return func(j remote.Job) (string, func(error)) { return a.tel.tel.JobSubmitted(a.tel.lead.Context(), j.ID) }
}

// traceJobs wraps a worker's RunFunc: each run is a span, the child of
// the lead's submit span through the job's trace context.
func (a *app) traceJobs(worker string, run remote.RunFunc) remote.RunFunc {
	if !a.tel.tel.Enabled() {
		return run
	}
	return func(ctx context.Context, j remote.Job, progress func(string, remote.Usage)) remote.Result {
		_, end := a.tel.tel.JobRun(j.Trace, j.ID, worker)
		res := run(ctx, j, progress)
		end(res.Error)
		return res
	}
}

// teamMetrics records, with metrics on, the duration of every background
// task of the lead's session that ends (a histogram by type and status)
// and reads the queues' depths at each export: unread mail per inbox of
// the lead's team, pending tasks on its list, remote jobs waiting for a
// worker. The returned function stops it.
func (a *app) teamMetrics(lr *leadRun) func() {
	tel := a.tel.tel
	if !tel.Metrics() || lr.bg == nil {
		return func() {}
	}
	bg := lr.bg
	if err := tel.ObserveDepths(func(ctx context.Context) telemetry.Depths { return depths(ctx, bg) }); err != nil {
		a.WarnOnce(err.Error())
	}
	sub := bg.reg.Subscribe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			e, err := sub.Next(context.Background())
			if err != nil {
				return
			}
			if e.Kind == task.EventTerminated && !e.State.End.IsZero() {
				tel.TaskEnded(string(e.State.Type), string(e.State.Status), e.State.End.Sub(e.State.Start))
			}
		}
	}()
	return func() {
		sub.Close()
		<-done
	}
}

// depths reads the queues of bg's session and team, each bounded by
// ctx; what cannot be read counts as empty.
func depths(ctx context.Context, bg *background) telemetry.Depths {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var d telemetry.Depths
	for _, st := range bg.reg.List() {
		if st.Type == task.RemoteAgent && st.Status == task.Pending {
			d.Jobs++
		}
	}
	if bg.team == nil {
		return d
	}
	name := bg.team.Lead.Team()
	if name == "" || strings.HasPrefix(name, "\x00") {
		return d
	}
	st := bg.team.raw // a look at the inboxes, not the lead taking its mail
	if cfg, err := st.Teams.Get(ctx, name); err == nil {
		d.Inboxes = map[string]int64{}
		for _, m := range cfg.Members {
			if msgs, err := st.Mail.Read(ctx, name, m.Name, true); err == nil {
				d.Inboxes[m.Name] = int64(len(msgs))
			}
		}
	}
	if ts, err := tasklist.New(st.Tasks, name).Tasks(ctx); err == nil {
		for _, t := range ts {
			if t.Status == tasklist.StatusPending {
				d.Tasks++
			}
		}
	}
	return d
}
