package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/troupe-dev/troupe/cli"

	"github.com/troupe-dev/troupe/remote"
	"github.com/troupe-dev/troupe/session/kit"
	"github.com/troupe-dev/troupe/session/record"
	natsstore "github.com/troupe-dev/troupe/store/nats"
)

// Environment of remote agents, read by both the lead and the workers.
const (
	// EnvRemoteHeartbeat is how often workers beat (a Go duration, default
	// remote.DefaultHeartbeat); a taken job goes out again after 6 missed
	// heartbeats and a worker is gone after 3. Lead and workers must agree.
	EnvRemoteHeartbeat = "TROUPE_REMOTE_HEARTBEAT"
	// EnvRemoteOnLost is the lead's policy for a job whose worker is lost:
	// fail (default) or requeue (run it once more).
	EnvRemoteOnLost = "TROUPE_REMOTE_ON_LOST"
	// EnvRemoteLabels are labels (comma separated) every remote job of the
	// lead asks of its worker.
	EnvRemoteLabels = "TROUPE_REMOTE_LABELS"
)

// remoteHeartbeat resolves the heartbeat: flag, else the environment,
// else the default.
func (a *app) remoteHeartbeat(flag time.Duration) (time.Duration, error) {
	if flag > 0 {
		return flag, nil
	}
	v := a.Getenv(EnvRemoteHeartbeat)
	if v == "" {
		return remote.DefaultHeartbeat, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, cli.Usagef("$%s %q: want a positive duration such as 5s", EnvRemoteHeartbeat, v)
	}
	return d, nil
}

// jobOptions derives the queue's timeouts from the heartbeat.
func jobOptions(beat time.Duration) natsstore.JobOptions {
	return natsstore.JobOptions{HeartbeatTimeout: 6 * beat, WorkerTTL: 3 * beat}
}

// openRemote gives a headless lead remote agents when its store is NATS:
// the Agent tool's isolation "remote" then submits jobs to troupe worker
// processes, tracked as remote_agent tasks in bg's registry. With the file
// store it does nothing. Each job submitted goes into rec, the session's
// record (nil records nothing). The returned function stops tracking and
// closes the connection.
func (a *app) openRemote(ctx context.Context, bg *background, rec *record.Log) (func(), error) {
	nop := func() {}
	spec, err := a.StoreSpec()
	if err != nil || spec.URL == "" {
		return nop, err
	}
	beat, err := a.remoteHeartbeat(0)
	if err != nil {
		return nop, err
	}
	policy := remote.Policy(a.Getenv(EnvRemoteOnLost))
	labels, err := remote.ParseLabels(a.Getenv(EnvRemoteLabels))
	if err != nil {
		return nop, cli.Usagef("$%s: %v", EnvRemoteLabels, err)
	}
	s, err := natsstore.Open(ctx, spec.URL, spec.Options)
	if err != nil {
		return nop, err
	}
	jobs, err := s.Jobs(ctx, jobOptions(beat))
	if err != nil {
		s.Close()
		return nop, fmt.Errorf("remote agents on %s: %w", s.URL(), err)
	}
	host, _ := os.Hostname()
	c, err := remote.NewClient(remote.ClientConfig{Queue: jobs, Workers: jobs, Tasks: bg.reg, OnLost: policy,
		SubmittedBy: fmt.Sprintf("lead@%s:%d", host, os.Getpid()), CheckEvery: beat, Now: a.Now, OnSubmit: rec.RemoteSubmitted,
		Spent: a.remoteSpent(bg.out), // budget_remote.go: the job's spending joins the session's
		Trace: a.jobTrace(),          // telemetry_jobs.go: the submission is a span, its context carried to the worker
		Log:   remoteLog(spec.Options.Logger)})
	if err != nil {
		s.Close()
		return nop, cli.Usagef("$%s: %v", EnvRemoteOnLost, err)
	}
	bg.remote = kit.RemoteSubmitter{Client: c, Labels: labels}
	return func() {
		// A lead ending early (interrupted, failed) stops its remote
		// agents: their workers are told while the connection is up.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c.StopActive(ctx)
		c.Close()
		s.Close()
	}, nil
}

// remoteLog passes what the remote client works around to the store's
// logger (warnings on stderr), if there is one.
func remoteLog(l *slog.Logger) func(string) {
	if l == nil {
		return nil
	}
	return func(msg string) { l.Warn("remote agents: " + msg) }
}
