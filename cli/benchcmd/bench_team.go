package benchcmd

import (
	"time"

	"github.com/troupe-dev/troupe/cli"

	"github.com/spf13/cobra"

	"github.com/troupe-dev/troupe/bench"
)

func (a *app) benchTeamCommand() *cobra.Command {
	var (
		f                          benchFlags
		teammates                  string
		hosts, tasks, chain, pings int
		pingGap, idle, timeout     time.Duration
		noLead                     bool
	)
	cmd := &cobra.Command{
		Use:   "team [--teammates 100] [--hosts 3] [--tasks 300]",
		Short: "Measure a team of in-process teammates spread over host processes",
		Long: `Measure a team of in-process teammates (the scripted model, no API calls)
spread over --hosts processes, each a host with its own working folder, all
on one store (--store file or nats://...).

For each --teammates count: the hosts add their share of the team and
start it one teammate at a time (reported: the time until every teammate
finished its first turn and went idle, each host's resident memory, the
growth of a host's memory per idle teammate); the idle team's CPU is taken
over --idle; then --tasks tasks in dependency chains of --chain are
created and the teammates claim and complete them on their own (reported:
drain time, throughput, claims, and a check that no task was claimed twice
and all were completed); then each host sends --pings messages to
teammates on the other hosts (reported: delivery p50/p99 from the send's
call to the recipient's model being asked with it, and from its return).

The command fails (status 1) when a task was claimed twice or left
unfinished, or a message never woke its recipient.`,
		Args: cli.Positional(),
		RunE: func(cmd *cobra.Command, args []string) error {
			ns, err := parseCounts("--teammates", teammates)
			if err != nil {
				return err
			}
			p := bench.TeamPlan{Sizes: ns, Base: bench.TeamConfig{Hosts: hosts, Tasks: tasks, Chain: chain, Pings: pings, PingGap: pingGap, Idle: idle, Timeout: timeout, NoLead: noLead}}
			if err := p.Check(); err != nil {
				return cli.Usagef("%v", err)
			}
			r, err := a.benchRunner(f)
			if err != nil {
				return err
			}
			rep := r.NewReport(a.Now())
			return a.benchReport(rep, r.Teams(cmd.Context(), p, rep))
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&teammates, "teammates", "100", "comma-separated team `SIZES`, each one run")
	fl.IntVar(&hosts, "hosts", 3, "host processes `N`")
	fl.IntVar(&tasks, "tasks", 300, "tasks `N` to drain (0: skip)")
	fl.IntVar(&chain, "chain", 4, "length `N` of the tasks' dependency chains")
	fl.IntVar(&pings, "pings", 20, "messages `N` each host sends to other hosts' teammates (0: skip)")
	fl.DurationVar(&pingGap, "ping-gap", 20*time.Millisecond, "pause `D` between a host's messages")
	fl.DurationVar(&idle, "idle", 3*time.Second, "window `D` over which the idle team's CPU is measured")
	fl.DurationVar(&timeout, "timeout", 5*time.Minute, "bound `D` on the drain and on the messages")
	fl.BoolVar(&noLead, "no-lead", false, "leave the lead's inbox unread (by default the runner reads it, as a lead does)")
	f.add(cmd)
	return cmd
}
