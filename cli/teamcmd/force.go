package teamcmd

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/troupe-dev/troupe/internal/procgroup"
	"github.com/troupe-dev/troupe/team"
)

// stopWait is how long delete --force waits for a teammate's process to
// end after SIGTERM before it kills it.
const stopWait = 5 * time.Second

// stopTeam stops what remains of team c on this host before delete
// --force removes it: it refuses while c's lead runs; it sends SIGTERM to
// the teammate processes still running (SIGKILL after stopWait), then
// kills the process groups they and the dead lead recorded.
func (a *app) stopTeam(c team.Config) error {
	home, err := a.Home()
	if err != nil {
		return err
	}
	dir := filepath.Join(home, "procs")
	ours := func(o procgroup.Owner) bool {
		if o.Agent == "" {
			return c.LeadSessionID != "" && o.Session == c.LeadSessionID
		}
		_, t, ok := strings.Cut(o.Agent, "@")
		return ok && t == c.Name
	}
	for _, o := range procgroup.Running(dir) {
		if o.Agent == "" && ours(o) {
			return fmt.Errorf("delete team %s: its lead still runs (process %d): end it, or let it delete its team", c.Name, o.PID)
		}
	}
	var signalled []procgroup.Owner
	for _, o := range procgroup.Running(dir) {
		if ours(o) {
			_ = syscall.Kill(o.PID, syscall.SIGTERM) // it ends its turn and what it started
			signalled = append(signalled, o)
		}
	}
	reaped, err := procgroup.Reap(dir, procgroup.ReapOptions{Match: ours, Wait: stopWait, Kill: true})
	told := map[int]bool{}
	for _, r := range reaped {
		who := r.Owner.Agent
		if who == "" {
			who = "the lead"
		}
		told[r.Owner.PID] = true
		fmt.Fprintf(a.Stderr, "stopped %s (process %d) and %d process group(s) it left\n", who, r.Owner.PID, r.Groups)
	}
	for _, o := range signalled {
		if !told[o.PID] { // it ended on the SIGTERM and cleared its own ledger before Reap looked
			fmt.Fprintf(a.Stderr, "stopped %s (process %d), which ended what it had started\n", o.Agent, o.PID)
		}
	}
	if err != nil {
		fmt.Fprintf(a.Stderr, "troupe: warning: %v\n", err)
	}
	return nil
}
