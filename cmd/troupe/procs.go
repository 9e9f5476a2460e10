package main

import (
	"context"
	"fmt"
	"path/filepath"
	"syscall"
	"time"

	"github.com/troupe-dev/troupe/internal/procgroup"
	"github.com/troupe-dev/troupe/swarm"
	"github.com/troupe-dev/troupe/team"
)

// The process groups of agents (docs/teams.md, "Nothing outlives its
// owner"): every troupe process that runs agents records the groups it
// starts (Bash, background shells, MCP servers, hooks) in a ledger under
// <home>/procs; whoever looks next after it died kills them: its lead when
// a teammate dies or is stopped (before its tasks are released), a lead
// when it starts or resumes, and `troupe team delete --force`.

// procsDir returns the folder of this host's process ledgers.
func (a *app) procsDir() (string, error) {
	home, err := a.Home() // the local folder, whatever the store
	if err != nil {
		return "", err
	}
	return filepath.Join(home, "procs"), nil
}

// keepProcs reaps the ledgers of processes gone, then, when this is
// troupe's own process (Main.KeepProcs), keeps this process's ledger as
// agent ("" for a lead) of session. closeProcs kills what is still
// recorded and removes the ledger.
func (a *app) keepProcs(agent, session string) (closeProcs func(), err error) {
	closeProcs = func() {}
	dir, err := a.procsDir()
	if err != nil {
		return closeProcs, err
	}
	a.reapProcs(dir, procgroup.ReapOptions{})
	if !a.KeepProcs {
		return closeProcs, nil
	}
	l, err := procgroup.Open(dir, agent, session)
	if err != nil {
		return closeProcs, err
	}
	procgroup.Keep(l)
	return func() {
		procgroup.Keep(nil)
		if err := l.Close(); err != nil {
			a.WarnOnce(err.Error())
		}
	}, nil
}

// reapProcs kills the process groups of the ledgers o selects whose owner
// is gone, with a line on stderr for each owner that left some.
func (a *app) reapProcs(dir string, o procgroup.ReapOptions) []procgroup.Reaped {
	reaped, err := procgroup.Reap(dir, o)
	if err != nil {
		a.WarnOnce(err.Error())
	}
	for _, r := range reaped {
		if r.Groups > 0 {
			who := r.Owner.Agent
			if who == "" {
				who = "a lead (session " + r.Owner.Session + ")"
			}
			fmt.Fprintf(a.Stderr, "troupe: killed %d process group(s) left by %s, process %d, which ended\n", r.Groups, who, r.Owner.PID)
		}
	}
	return reaped
}

// reapAgent is the lead's Reap of one teammate (swarm.LeadConfig.Reap):
// the ledger of agent's process pid (any of agent's when 0), waited for
// up to a few seconds (a pane just closed takes its process a moment to
// end).
func (a *app) reapAgent(agentID string, pid int) {
	dir, err := a.procsDir()
	if err != nil {
		return
	}
	a.reapProcs(dir, procgroup.ReapOptions{Wait: reapWait, Match: func(o procgroup.Owner) bool {
		return o.Agent == agentID && (pid == 0 || o.PID == pid)
	}})
}

// reapWait is how long a lead waits for a teammate's process to end once
// its pane is gone, before leaving its groups to a later reap.
const reapWait = 5 * time.Second

// reattach makes a lead that comes back (--continue, --resume) the lead of
// the team its session left behind (swarm.Lead.Reattach): its teammates'
// processes are found through their ledgers; those still running in panes
// of the old lead are stopped (SIGTERM, then SIGKILL after reapWait).
func (a *app) reattach(ctx context.Context, lead *swarm.Lead) {
	dir, err := a.procsDir()
	if err != nil {
		return
	}
	owners := func(m team.Member) []procgroup.Owner {
		var out []procgroup.Owner
		for _, o := range procgroup.Running(dir) {
			if o.Agent == m.AgentID {
				out = append(out, o)
			}
		}
		return out
	}
	state := func(m team.Member) int {
		if len(owners(m)) > 0 {
			return swarm.MateRunning
		}
		return swarm.MateGone
	}
	stop := func(m team.Member) {
		for _, o := range owners(m) {
			_ = syscall.Kill(o.PID, syscall.SIGTERM) // it ends its turn and what it started
		}
		a.reapProcs(dir, procgroup.ReapOptions{Wait: reapWait, Kill: true, Match: func(o procgroup.Owner) bool { return o.Agent == m.AgentID }})
	}
	r, err := lead.Reattach(ctx, state, stop)
	if err != nil {
		fmt.Fprintf(a.Stderr, "troupe: %v\n", err)
	}
	if r.Team != "" {
		fmt.Fprintf(a.Stderr, "troupe: resumed as the lead of team %q (dead: %d, stopped: %d, tasks released: %d)\n", r.Team, len(r.Dead), len(r.Stopped), len(r.Released))
	}
}
