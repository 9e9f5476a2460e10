// Package benchcmd is `troupe bench`: the mailbox, claim and team benchmarks
// against a store, with real processes for writers, watchers, claimers and
// hosts (package bench holds the plans).
package benchcmd

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/troupe-dev/troupe/cli"

	"github.com/spf13/cobra"

	"github.com/troupe-dev/troupe/bench"
	"github.com/troupe-dev/troupe/session/kit"
)

// app is the shared state of the command line, with this package's
// commands as its methods.
type app struct{ *cli.App }

// New returns the command, bound to the command line's shared state.
func New(c *cli.App) *cobra.Command { return (&app{c}).benchCommand() }

func (a *app) benchCommand() *cobra.Command {
	c := cli.Group("bench", "Benchmark the file store with real processes (the peer baseline's scenarios)",
		a.benchMailboxCommand(),
		a.benchClaimCommand(),
		a.benchTeamCommand(),
		a.benchChildCommand(),
	)
	c.Long = `Benchmark the file store the way docs/benchmarks.md measured Claude Code's
file protocol: every writer, watcher and claimer is a separate troupe
process, started behind a barrier, working in a fresh temporary store.

Progress goes to stderr; the results go to stdout as markdown tables, or as
JSON with --json. The command fails (status 1) when a run finds a lost,
duplicated or invented message, a claim race without exactly one winner,
or a task claimed twice.

With --store nats://HOST:PORT (or $TROUPE_STORE) the same scenarios run on
that NATS server instead, each run in a namespace of its own that is
deleted afterwards (--keep leaves it); the interop scenario is file-only.
The server must not need credentials or TLS files yet: those are refused.`
	return c
}

// benchFlags are the options both bench commands share.
type benchFlags struct {
	tmp     string
	keep    bool
	profile string
}

func (f *benchFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.tmp, "tmp", "", "make the temporary stores under `DIR` (default: the system's)")
	cmd.Flags().BoolVar(&f.keep, "keep", false, "keep each run's store instead of removing it")
	cmd.Flags().StringVar(&f.profile, "cpuprofile", "", "write each troupe process's CPU profile into `DIR` (bench team hosts also write heap and goroutine profiles once their team is idle)")
}

// benchRunner returns a Runner whose children are this executable.
func (a *app) benchRunner(f benchFlags) (*bench.Runner, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("bench: find the troupe executable: %w", err)
	}
	nats, err := a.benchStore()
	if err != nil {
		return nil, err
	}
	if f.profile != "" {
		// Made now: a child that cannot write its profile exits early,
		// which reads as a failed run.
		if err := os.MkdirAll(f.profile, 0o755); err != nil {
			return nil, fmt.Errorf("bench: --cpuprofile: %w", err)
		}
	}
	return &bench.Runner{
		Exe:        exe,
		ChildArgs:  []string{"bench", "child"},
		Start:      bench.ExecStart,
		TempDir:    f.tmp,
		Keep:       f.keep,
		Progress:   a.Stderr,
		ProfileDir: f.profile,
		NATS:       nats,
	}, nil
}

func (a *app) benchMailboxCommand() *cobra.Command {
	var (
		f benchFlags
		o mailboxBench
	)
	cmd := &cobra.Command{
		Use:   "mailbox [--writers 1,4,16,64] [--msgs 200] [--preload 0] [--reps 1] [--delivery N] [--interop N]",
		Short: "Measure sends into one inbox, delivery latency, and sends mixed with the peer's Node writers",
		Long: `Measure the file store's mailbox with separate processes.

Writers (B1-B3): for each count in --writers, that many writer processes
send --msgs messages each (300-character text, as in the peer's workload)
into one inbox holding --preload unread messages. Reported: acknowledged
messages per second from the barrier to the last return, send latency,
failed sends, and a check of the final inbox: lost (acknowledged but
missing), duplicates, phantoms. --writers 0 skips this part.

Delivery (B4, with --delivery N): one writer sends N messages at random
gaps between --gap-min and --gap-max into an inbox holding
--delivery-preload read messages, while a watcher process waits on Watch
and Reads; latency runs from the send's call (beside it, from its return)
to the watcher's Read.

Interop (B8, with --interop N): N troupe writers and N Node writers of the
peer's replica (inbox-writer.js with proper-lockfile, in each of
--peer-modes) send --msgs messages each into one inbox; both sides'
acknowledged messages must all be there once, in a valid JSON file. The
peer-bench folder is not part of this repository: it is a small set of
Node scripts, kept beside it by troupe's maintainers, that replay Claude
Code's agent-team file protocol (inbox writes under proper-lockfile, task
claims) for these comparisons. Give its path with --peer-bench (default
$TROUPE_PEER_BENCH); it is copied and npm-installed in a temporary folder,
or linked to the node_modules in $TROUPE_PEER_NODE_MODULES. Without it, or
when node or npm cannot run, B8 is skipped with a message saying so.`,
		Args: cli.Positional(),
		RunE: func(cmd *cobra.Command, args []string) error { return a.runBenchMailbox(cmd.Context(), f, o) },
	}
	fl := cmd.Flags()
	fl.StringVar(&o.writers, "writers", "1,4,16,64", "comma-separated writer process `COUNTS` (0: skip)")
	fl.IntVar(&o.msgs, "msgs", 200, "messages per writer `N`")
	fl.IntVar(&o.preload, "preload", 0, "unread messages `N` in the inbox before the writers start")
	fl.IntVar(&o.reps, "reps", 1, "repetitions `N` of each writer count")
	fl.IntVar(&o.text, "text", bench.DefaultText, "message text length in `BYTES`")
	fl.IntVar(&o.delivery, "delivery", 0, "measure delivery latency with `N` messages (0: skip)")
	fl.IntVar(&o.deliveryPre, "delivery-preload", 50, "read messages `N` in the inbox during the delivery run")
	fl.DurationVar(&o.gapMin, "gap-min", 300*time.Millisecond, "shortest pause `D` between delivery sends")
	fl.DurationVar(&o.gapMax, "gap-max", 900*time.Millisecond, "longest pause `D` between delivery sends")
	fl.DurationVar(&o.settle, "settle", 2*time.Second, "how long `D` the watcher may lag after the last delivery send")
	fl.IntVar(&o.inter, "interop", 0, "run `N` troupe and N Node writers into one inbox (0: skip)")
	fl.StringVar(&o.peerModes, "peer-modes", "legacy,current", "peer write `PATHS` for --interop: legacy, current")
	fl.StringVar(&o.peerDir, "peer-bench", "", "the peer-bench `DIR` for --interop (default $TROUPE_PEER_BENCH)")
	f.add(cmd)
	return cmd
}

// mailboxBench are the flags of troupe bench mailbox.
type mailboxBench struct {
	writers, peerModes, peerDir  string
	msgs, preload, reps, text    int
	delivery, deliveryPre, inter int
	gapMin, gapMax, settle       time.Duration
}

// runBenchMailbox is troupe bench mailbox: it checks the flags, runs the
// parts asked for and reports them.
func (a *app) runBenchMailbox(ctx context.Context, f benchFlags, o mailboxBench) error {
	ws, err := parseCounts("--writers", o.writers)
	if err != nil {
		return err
	}
	modes, err := bench.ParsePeerModes(o.peerModes)
	if err != nil {
		return cli.Usagef("--peer-modes %v", err)
	}
	if o.peerDir == "" {
		o.peerDir = a.Getenv("TROUPE_PEER_BENCH")
	}
	p := bench.MailboxPlan{Writers: ws, Reps: o.reps, Writer: bench.WritersConfig{Msgs: o.msgs, Preload: o.preload, Text: o.text},
		Delivery: bench.DeliveryConfig{N: o.delivery, Preload: o.deliveryPre, GapMin: o.gapMin, GapMax: o.gapMax, Text: o.text, Settle: o.settle},
		Interop:  bench.InteropConfig{Troupe: o.inter, Node: o.inter, Msgs: o.msgs, Text: o.text}, PeerModes: modes,
		Peer: bench.PeerConfig{Source: o.peerDir, NodeModules: a.Getenv("TROUPE_PEER_NODE_MODULES")}}
	if err := p.Check(); err != nil {
		return cli.Usagef("%v", err)
	}
	r, err := a.benchRunner(f)
	if err != nil {
		return err
	}
	rep := r.NewReport(a.Now())
	return a.benchReport(rep, r.Mailbox(ctx, p, rep))
}

func (a *app) benchClaimCommand() *cobra.Command {
	var (
		f                   benchFlags
		agents, drainAgents string
		rounds, drainTasks  int
	)
	cmd := &cobra.Command{
		Use:   "claim [--agents 4,16,64] [--rounds 20] [--drain-tasks 50]",
		Short: "Measure task claiming: a race on one task, and draining independent tasks",
		Long: `Measure task claiming with separate processes.

Race (B6): for each count in --agents, that many claimer processes race
ClaimTask on one fresh task per round, for --rounds rounds. Every round
must have exactly one winner, who must be the stored owner.

Drain (B7): for each count in --drain-agents, that many agent processes
each loop Claim, then complete, until none of --drain-tasks independent
tasks is left. No task may be claimed twice.

--rounds 0 or --drain-tasks 0 skips that part.`,
		Args: cli.Positional(),
		RunE: func(cmd *cobra.Command, args []string) error {
			as, err := parseCounts("--agents", agents)
			if err != nil {
				return err
			}
			ds, err := parseCounts("--drain-agents", drainAgents)
			if err != nil {
				return err
			}
			p := bench.ClaimPlan{Agents: as, DrainAgents: ds, Rounds: rounds, DrainTasks: drainTasks}
			if err := p.Check(); err != nil {
				return cli.Usagef("%v", err)
			}
			r, err := a.benchRunner(f)
			if err != nil {
				return err
			}
			rep := r.NewReport(a.Now())
			return a.benchReport(rep, r.Claims(cmd.Context(), p, rep))
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&agents, "agents", "4,16,64", "comma-separated claimer process `COUNTS` for the race (0: skip)")
	fl.IntVar(&rounds, "rounds", 20, "race rounds `N`")
	fl.StringVar(&drainAgents, "drain-agents", "4,16", "comma-separated agent process `COUNTS` for the drain (0: skip)")
	fl.IntVar(&drainTasks, "drain-tasks", 50, "tasks `N` to drain")
	f.add(cmd)
	return cmd
}

// benchReport prints what was measured, even when runErr stopped the runs
// early, and returns runErr or an error naming the problems found.
func (a *app) benchReport(rep *bench.Report, runErr error) error {
	var err error
	if a.JSON {
		err = a.PrintJSON(rep)
	} else {
		err = rep.WriteMarkdown(a.Stdout)
	}
	if runErr != nil {
		return fmt.Errorf("bench: %w", runErr)
	}
	if err != nil {
		return err
	}
	if p := rep.Problems(); len(p) > 0 {
		return fmt.Errorf("bench found problems:\n  %s", strings.Join(p, "\n  "))
	}
	return nil
}

// benchChildCommand is the hidden entry point of the processes the bench
// commands start.
func (a *app) benchChildCommand() *cobra.Command {
	return &cobra.Command{
		Use:    "child CONFIG",
		Short:  "Run one benchmark process (started by the bench commands)",
		Hidden: true,
		Args:   cli.Positional("CONFIG"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return bench.Child{Teammate: kit.BenchTeammate}.Run(cmd.Context(), args[0], a.Stdin, a.Stdout)
		},
	}
}

// parseCounts parses a flag of comma-separated positive counts; "" or
// "0" is none.
func parseCounts(flag, s string) ([]int, error) {
	ns, err := bench.ParseCounts(s)
	if err != nil {
		return nil, cli.Usagef("%s %v", flag, err)
	}
	return ns, nil
}
