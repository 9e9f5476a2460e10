package main

import (
	"context"

	"github.com/troupe-dev/troupe/remote"
	"github.com/troupe-dev/troupe/session/kit"
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

// teamMetrics records task durations and queue depths with metrics on
// (kit.TaskMetrics); the returned function stops it.
func (a *app) teamMetrics(lr *leadRun) func() {
	bg := lr.bg
	if bg == nil {
		return func() {}
	}
	return kit.TaskMetrics(a.tel.tel, bg.reg, func() (string, kit.Stores) {
		if bg.team == nil {
			return "", kit.Stores{}
		}
		return bg.team.Lead.Team(), bg.team.Raw
	}, a.WarnOnce)
}
