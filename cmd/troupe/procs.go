package main

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/troupe-dev/troupe/internal/procgroup"
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
