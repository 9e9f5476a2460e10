package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/troupe-dev/troupe/cli"

	"github.com/spf13/cobra"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/remote"
	"github.com/troupe-dev/troupe/session/kit"
	natsstore "github.com/troupe-dev/troupe/store/nats"
)

// workerFlags are the flags of troupe worker; h carries the model and
// permission flags it shares with the headless mode.
type workerFlags struct {
	h         headless
	name      string
	labels    string
	capacity  int
	requeue   bool
	heartbeat time.Duration
}

func (a *app) workerCommand() *cobra.Command {
	var f workerFlags
	c := &cobra.Command{
		Use:   "worker",
		Short: "Run remote agents: take jobs from the NATS store and run each with the headless tools in --cwd",
		Long: `troupe worker registers with the NATS store given by --store (or $TROUPE_STORE)
and runs the sub-agents that leads submit with the Agent tool's isolation
"remote" (troupe -p --store nats://...). Each job runs as a headless agent on
this worker's provider and model (a model alias the lead's Agent call names is
not used), with the core tools rooted at --cwd and this worker's permission
settings; its progress goes back to the lead, and so does its result, which
ends the lead's remote_agent task. Stopping the task on the lead cancels it.

The jobs get the tools of this worker's MCP servers (its .mcp.json, settings
files and --mcp-config), started once when the worker starts.

A job wanting labels runs only on a worker that has all of them (--labels).
On SIGINT or SIGTERM the worker stops taking jobs and finishes the running
ones, or with --requeue gives them back to the queue for another worker.`,
		Args: cli.Positional(),
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runWorker(cmd.Context(), &f) },
	}
	fl := c.Flags()
	fl.StringVar(&f.name, "name", "", "worker `NAME` leads see ([A-Za-z0-9_-]; default <host>-<pid>)")
	fl.StringVar(&f.labels, "labels", "", "comma-separated `LABELS` this worker offers, such as gpu,linux")
	fl.IntVar(&f.capacity, "capacity", 1, "jobs run at once")
	fl.StringVar(&f.h.cwd, "cwd", "", "working `DIR` of the jobs' tools (default: the current folder)")
	fl.BoolVar(&f.requeue, "requeue", false, "on shutdown, give running jobs back to the queue instead of finishing them")
	fl.DurationVar(&f.heartbeat, "heartbeat", 0, "how often to refresh the registration and the jobs (default $"+EnvRemoteHeartbeat+", else 5s; leads must use the same)")
	f.h.model.Add(fl)
	fl.IntVar(&f.h.maxTurns, "max-turns", agent.DefaultMaxTurns, "bound on model calls in one job")
	f.h.perm.Add(fl, "", false) // without --permission-prompt-command: a job's question is denied
	a.addMCPFlags(c)            // mcp.go: the jobs' MCP servers are this worker's own
	return c
}

// runWorker runs troupe worker until ctx ends.
func (a *app) runWorker(ctx context.Context, f *workerFlags) error {
	spec, err := a.StoreSpec()
	if err != nil {
		return err
	}
	if spec.URL == "" {
		return cli.Usagef("troupe worker needs a NATS store: --store nats://HOST:4222 (or $TROUPE_STORE); start a server with troupe serve")
	}
	labels, err := f.check()
	if err != nil {
		return err
	}
	beat, err := a.remoteHeartbeat(f.heartbeat)
	if err != nil {
		return err
	}
	cwd, err := a.WorkDir(f.h.cwd)
	if err != nil {
		return err
	}
	a.warnUntrusted(cwd, a.Stderr) // trust.go
	approver, closeAudit, err := f.h.perm.Approver(a.App, cwd)
	if err != nil {
		return err
	}
	defer closeAudit()
	hs, err := a.openHooks(cwd, "worker-"+f.name, approver.Audit, a.Stderr) // hooks.go: read once, when the worker starts
	if err != nil {
		return err
	}
	approver.PermissionHook = hs.PermissionHook()
	model, err := f.h.model.Open(a.Getenv)
	if err != nil {
		return err
	}
	s, err := natsstore.Open(ctx, spec.URL, spec.Options)
	if err != nil {
		return err
	}
	defer s.Close()
	queue, err := s.Jobs(ctx, jobOptions(beat))
	if err != nil {
		return fmt.Errorf("remote agents on %s: %w", s.URL(), err)
	}
	closePresence, err := a.workerPresence(ctx, s, f.name, cwd) // peers.go: listed among the sessions
	if err != nil {
		return err
	}
	defer closePresence()
	say := kit.Sayer(a.Stdout, a.Now)
	closeMCP, err := a.startWorkerMCP(ctx, cwd, say) // worker_mcp.go: this host's MCP servers, for every job
	if err != nil {
		return err
	}
	defer closeMCP()
	flushTel, err := a.paneTelemetry(ctx) // telemetry.go: each job's run is a span (telemetry_jobs.go)
	if err != nil {
		return err
	}
	defer flushTel()
	jobs := kit.RemoteJobs{Run: a.kitRun(), Worker: f.name, Cwd: cwd, Model: model, ModelName: f.h.model.Name, MaxTurns: f.h.maxTurns,
		NoInstr: f.h.noInstr, Approver: approver, Transcripts: a.transcriptsFor("worker-" + f.name)}
	w := kit.RemoteWorker{Jobs: jobs, Name: f.name, Labels: labels, Capacity: f.capacity, Heartbeat: beat, Requeue: f.requeue,
		Queue: queue, Where: s.URL(), Say: say,
		Wrap: func(run remote.RunFunc) remote.RunFunc { return a.traceJobs(f.name, run) }} // telemetry_jobs.go
	return w.Run(ctx)
}

// check checks the worker's flags and names it when --name is not given
// (<host>-<pid>); it returns its labels.
func (f *workerFlags) check() ([]string, error) {
	if f.capacity < 1 {
		return nil, cli.Usagef("--capacity %d: want at least 1", f.capacity)
	}
	if f.h.maxTurns <= 0 {
		return nil, cli.Usagef("--max-turns %d: want a positive number", f.h.maxTurns)
	}
	labels, err := remote.ParseLabels(f.labels)
	if err != nil {
		return nil, cli.Usagef("--labels: %v", err)
	}
	if f.name == "" {
		host, _ := os.Hostname()
		f.name = remote.DefaultName(host, os.Getpid())
	}
	if err := remote.CheckName(f.name); err != nil {
		return nil, cli.Usagef("--name: %v", err)
	}
	return labels, nil
}
