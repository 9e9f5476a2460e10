package bench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	natsstore "github.com/troupe-dev/troupe/store/nats"
)

// ParseCounts parses comma-separated positive counts such as "1,4,16";
// "" or "0" is none.
func ParseCounts(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "0" {
		return nil, nil
	}
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q: want comma-separated positive counts, such as 1,4,16", s)
		}
		out = append(out, n)
	}
	return out, nil
}

// ParsePeerModes parses comma-separated peer write paths: PeerLegacy
// and/or PeerCurrent.
func ParsePeerModes(s string) ([]string, error) {
	var out []string
	for m := range strings.SplitSeq(s, ",") {
		m = strings.TrimSpace(m)
		if m != PeerLegacy && m != PeerCurrent {
			return nil, fmt.Errorf("%q: want %s and/or %s", s, PeerLegacy, PeerCurrent)
		}
		out = append(out, m)
	}
	return out, nil
}

// MailboxPlan is what troupe bench mailbox runs: the writers (B1-B3) for
// each count, the delivery latency (B4) and the interop with the peer's
// Node writers (B8).
type MailboxPlan struct {
	// Writers are the writer process counts, each run Reps times with
	// Writer's messages, preload and text (its Writers and Rep are set).
	Writers []int
	Reps    int
	Writer  WritersConfig
	// Delivery runs when Delivery.N is positive.
	Delivery DeliveryConfig
	// Interop runs once per PeerModes when Interop.Troupe is positive,
	// with the peer's replica from Peer. An empty Peer.Source skips it,
	// saying why in the report.
	Interop   InteropConfig
	PeerModes []string
	Peer      PeerConfig
}

// Check reports a plan that cannot run, naming troupe bench mailbox's
// flag at fault.
func (p MailboxPlan) Check() error {
	switch {
	case p.Writer.Msgs < 1:
		return fmt.Errorf("--msgs %d: want at least 1", p.Writer.Msgs)
	case p.Writer.Preload < 0 || p.Delivery.Preload < 0 || p.Delivery.N < 0 || p.Interop.Troupe < 0:
		return errors.New("--preload, --delivery, --delivery-preload and --interop must not be negative")
	case p.Reps < 1:
		return fmt.Errorf("--reps %d: want at least 1", p.Reps)
	case p.Delivery.GapMin < 0 || p.Delivery.GapMax < p.Delivery.GapMin:
		return fmt.Errorf("--gap-min %v --gap-max %v: want 0 <= min <= max", p.Delivery.GapMin, p.Delivery.GapMax)
	}
	return nil
}

// Mailbox runs p, adding each result to rep as it comes; it stops at the
// first run that fails.
func (r *Runner) Mailbox(ctx context.Context, p MailboxPlan, rep *Report) error {
	for _, w := range p.Writers {
		for i := range p.Reps {
			c := p.Writer
			c.Writers, c.Rep = w, i
			res, err := r.Writers(ctx, c)
			if err != nil {
				return err
			}
			rep.Writers = append(rep.Writers, res)
		}
	}
	if p.Delivery.N > 0 {
		res, err := r.Delivery(ctx, p.Delivery)
		if err != nil {
			return err
		}
		rep.Delivery = &res
	}
	if p.Interop.Troupe > 0 {
		return r.interops(ctx, p, rep)
	}
	return nil
}

// interops prepares the peer's replica and runs B8 once per mode; when
// node, npm or the scripts are missing it records why B8 was skipped.
func (r *Runner) interops(ctx context.Context, p MailboxPlan, rep *Report) error {
	if p.Peer.Source == "" {
		rep.Skipped = append(rep.Skipped, "B8 interop: skipped: it runs the peer's Node replica of Claude Code's inbox writer (the peer-bench scripts, kept outside this repository by troupe's maintainers); pass their folder with --peer-bench DIR or $TROUPE_PEER_BENCH")
		return nil
	}
	peer, err := r.PreparePeer(ctx, p.Peer)
	if errors.Is(err, ErrNoNode) {
		rep.Skipped = append(rep.Skipped, "B8 interop: "+err.Error())
		r.progressf("skipping B8 interop: %v", err)
		return nil
	}
	if err != nil {
		return err
	}
	defer peer.Close()
	rep.Machine.Node = peer.NodeVersion
	for _, mode := range p.PeerModes {
		c := p.Interop
		c.Mode = mode
		res, err := r.Interop(ctx, peer, c)
		if err != nil {
			return err
		}
		rep.Interop = append(rep.Interop, res)
	}
	return nil
}

// ClaimPlan is what troupe bench claim runs: the race on one task (B6)
// for each of Agents, Rounds rounds, and the drain (B7) of DrainTasks
// tasks for each of DrainAgents. Zero rounds or tasks skip that part.
type ClaimPlan struct {
	Agents, DrainAgents []int
	Rounds, DrainTasks  int
}

// Check reports a plan that cannot run, naming troupe bench claim's flag
// at fault.
func (p ClaimPlan) Check() error {
	if p.Rounds < 0 || p.DrainTasks < 0 {
		return errors.New("--rounds and --drain-tasks must not be negative")
	}
	return nil
}

// Claims runs p, adding each result to rep as it comes; it stops at the
// first run that fails.
func (r *Runner) Claims(ctx context.Context, p ClaimPlan, rep *Report) error {
	for _, n := range p.Agents {
		if p.Rounds == 0 {
			break
		}
		res, err := r.Race(ctx, RaceConfig{Agents: n, Rounds: p.Rounds})
		if err != nil {
			return err
		}
		rep.Race = append(rep.Race, res)
	}
	for _, n := range p.DrainAgents {
		if p.DrainTasks == 0 {
			break
		}
		res, err := r.Drain(ctx, DrainConfig{Agents: n, Tasks: p.DrainTasks})
		if err != nil {
			return err
		}
		rep.Drain = append(rep.Drain, res)
	}
	return nil
}

// TeamPlan is what troupe bench team runs: Base once per team size in
// Sizes.
type TeamPlan struct {
	Sizes []int
	Base  TeamConfig
}

// Check reports a plan that cannot run, naming troupe bench team's flag
// at fault.
func (p TeamPlan) Check() error {
	c := p.Base
	switch {
	case len(p.Sizes) == 0:
		return errors.New("--teammates: want at least one team size")
	case c.Hosts < 1:
		return fmt.Errorf("--hosts %d: want at least 1", c.Hosts)
	case c.Tasks < 0:
		return fmt.Errorf("--tasks %d: want 0 or more", c.Tasks)
	case c.Chain < 1:
		return fmt.Errorf("--chain %d: want at least 1 (1: independent tasks)", c.Chain)
	case c.Pings < 0:
		return fmt.Errorf("--pings %d: want 0 or more", c.Pings)
	case c.Idle <= 0 || c.Timeout <= 0 || c.PingGap < 0:
		return errors.New("--idle and --timeout must be positive, --ping-gap not negative")
	}
	for _, n := range p.Sizes {
		if n < c.Hosts {
			return fmt.Errorf("--teammates %d on --hosts %d: want at least one teammate a host", n, c.Hosts)
		}
	}
	return nil
}

// Teams runs p, adding each result measured (if only in part) to rep; it
// stops at the first run that fails.
func (r *Runner) Teams(ctx context.Context, p TeamPlan, rep *Report) error {
	for _, n := range p.Sizes {
		c := p.Base
		c.Teammates = n
		res, err := r.Team(ctx, c)
		if res.Teammates > 0 { // measured, if only in part
			rep.Team = append(rep.Team, res)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// NewReport returns an empty report of the machine, as probed at now,
// and of the store r measures.
func (r *Runner) NewReport(now time.Time) *Report {
	return &Report{Machine: Probe(now), Store: r.StoreName()}
}

// CheckNATS reports NATS options a benchmark of the server at url cannot
// honour: each run works in a namespace of its own, so a namespace is
// refused rather than ignored, and so are credentials and TLS files,
// which the children are not given yet. A benchmark never silently
// measures another store than the one asked for.
func CheckNATS(url string, o natsstore.Options) error {
	switch {
	case o.Token != "" || o.CredsFile != "" || o.User != "" || o.Password != "":
		return fmt.Errorf("bench on NATS (%s): credentials are not passed to the benchmark's processes yet; run it against a server that needs none", url)
	case o.TLSCAFile != "" || o.TLSCertFile != "" || o.TLSKeyFile != "":
		return fmt.Errorf("bench on NATS (%s): TLS files are not passed to the benchmark's processes yet; run it against a plain nats:// server", url)
	case o.Namespace != "":
		return fmt.Errorf("bench on NATS (%s): every run makes and deletes a namespace of its own; drop the namespace %q", url, o.Namespace)
	}
	return nil
}
