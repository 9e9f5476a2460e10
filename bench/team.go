package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/team"
)

// TeamConfig is one run of the team benchmark: Hosts processes, each a
// host with its own working folder, run Teammates in-process teammates
// between them (swarm.Teammate on the scripted model); they drain a task
// list of Tasks tasks in chains of Chain (each task blocked by the one
// before it in its chain), then exchange Pings messages per host.
type TeamConfig struct {
	Teammates, Hosts, Tasks int
	// Chain is the length of the dependency chains; zero means 4, 1 makes
	// the tasks independent.
	Chain int
	// Pings is how many messages each host sends to teammates on the other
	// hosts (on its own when alone); zero sends none (the command's flag
	// defaults to 20).
	Pings int
	// PingGap is the pause between a host's pings; zero means 20 ms.
	PingGap time.Duration
	// Idle is the window over which the idle team's CPU is measured; zero
	// means 3 s.
	Idle time.Duration
	// Timeout bounds the drain, and the pings until each woke its
	// recipient (those that did not count as missing); zero means 5
	// minutes.
	Timeout time.Duration
	// NoLead leaves the lead's inbox unread. By default the runner reads
	// it and marks what it read, as a lead's inbox pump does; unread, the
	// teammates' idle notifications pile up and every send to the lead
	// rewrites them all (a thousand at 1,000 teammates).
	NoLead bool
}

// TeamResult is the outcome of a Team run.
type TeamResult struct {
	Teammates int `json:"teammates"`
	Hosts     int `json:"hosts"`
	Tasks     int `json:"tasks"`
	Chain     int `json:"chain"`
	// SpawnS runs from "go" to the last host whose teammates were all idle
	// once: every teammate added to the team, started and through its
	// first turn.
	SpawnS float64 `json:"spawn_s"`
	// HostRSSMB is each host's resident memory once its team was idle;
	// IdleTeammateKB, the growth of a host's resident memory from before
	// the spawn to then, per teammate (mean over the hosts).
	HostRSSMB      []float64 `json:"host_rss_mb"`
	IdleTeammateKB float64   `json:"idle_teammate_kb"`
	// IdleCPUPct is the CPU of every host over the idle window, in percent
	// of one core; the window starts once the team settled (every
	// teammate idle in the team file).
	IdleCPUPct float64 `json:"idle_cpu_pct"`
	IdleS      float64 `json:"idle_s"`
	// DrainS runs from the tasks' creation to the last one completed.
	DrainS       float64 `json:"drain_s"`
	TasksPerS    float64 `json:"tasks_per_s"`
	Claims       int     `json:"claims"`
	DoubleClaims int     `json:"double_claims"`
	Completed    int     `json:"completed"`
	// Delivery runs from a ping's Send call to the recipient teammate's
	// model being asked with it (the teammate woke and took it as its
	// prompt); FromReturn from the Send's return. These pings go to a
	// settled team: every teammate idle in the team file, after the drain
	// (or the idle window when there is none).
	Pings      int     `json:"pings"`
	Missing    int     `json:"missing"`
	Delivery   Summary `json:"delivery"`
	FromReturn Summary `json:"from_return"`
	// SettleS is how long the team took to settle after the drain.
	SettleS float64 `json:"settle_s,omitempty"`
	// Churn is the same for pings sent right after the drain, while the
	// teammates that lost their last claims still linger and then go idle
	// together (absent without a drain).
	Churn *PingResult `json:"churn,omitempty"`
	// Again is a second round to the settled team, once it has settled
	// again after the first (the first round's recipients idle again):
	// what a team that has just handled deliveries does with the next.
	Again    *PingResult `json:"again,omitempty"`
	Errors   []string    `json:"errors,omitempty"`
	Examples []string    `json:"examples,omitempty"`
	// Dumps are the files with every host's goroutines, written after a
	// round that missed pings; the run's folder is kept for them.
	Dumps []string `json:"goroutine_dumps,omitempty"`
}

// PingResult is one round of pings of a Team run.
type PingResult struct {
	Pings      int     `json:"pings"`
	Missing    int     `json:"missing"`
	Delivery   Summary `json:"delivery"`
	FromReturn Summary `json:"from_return"`
}

// teamName is the team (and task list) of the team benchmark.
const teamName = "benchteam"

// Team runs the team benchmark. When the drain does not finish within the
// timeout, it returns what was measured until then with the error.
func (r *Runner) Team(ctx context.Context, c TeamConfig) (TeamResult, error) {
	if err := r.check(); err != nil {
		return TeamResult{}, err
	}
	if c.Teammates < 1 || c.Hosts < 1 || c.Hosts > c.Teammates || c.Tasks < 0 || c.Chain < 0 || c.Pings < 0 {
		return TeamResult{}, fmt.Errorf("bench: team of %d teammates on %d hosts, %d tasks: want 1 <= hosts <= teammates, no negative counts", c.Teammates, c.Hosts, c.Tasks)
	}
	c.Chain = cmpOr(c.Chain, 4)
	c.PingGap = cmpOr(c.PingGap, 20*time.Millisecond)
	c.Idle = cmpOr(c.Idle, 3*time.Second)
	c.Timeout = cmpOr(c.Timeout, 5*time.Minute)
	label := fmt.Sprintf("team N=%d hosts=%d tasks=%d", c.Teammates, c.Hosts, c.Tasks)
	dir, cleanup, err := r.runDir("team")
	if err != nil {
		return TeamResult{}, err
	}
	var res TeamResult
	defer func() {
		if len(res.Dumps) > 0 && !r.Keep {
			r.progressf("  kept %s for the goroutines of the round that missed pings", dir)
			return
		}
		cleanup()
	}()
	s, err := r.openRun(ctx, dir)
	if err != nil {
		return TeamResult{}, err
	}
	defer s.close()
	if _, err := team.Create(ctx, s.teams, team.CreateOptions{Name: teamName, Now: time.Now(), Pick: rand.IntN}); err != nil {
		return TeamResult{}, fmt.Errorf("create the bench team: %w", err)
	}
	if !c.NoLead {
		lctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			readLead(lctx, s.mail)
		}()
		defer func() { stop(); <-done }()
	}
	names := make([][]string, c.Hosts)
	for i := range c.Teammates {
		names[i%c.Hosts] = append(names[i%c.Hosts], fmt.Sprintf("t%04d", i))
	}
	r.progressf("%s: starting %d host processes", label, c.Hosts)
	g := r.newGroup()
	defer g.abort()
	for h := range c.Hosts {
		var targets []string
		for o := range c.Hosts {
			if o != h || c.Hosts == 1 {
				targets = append(targets, names[o]...)
			}
		}
		rand.Shuffle(len(targets), func(i, j int) { targets[i], targets[j] = targets[j], targets[i] })
		work := filepath.Join(dir, "host-"+strconv.Itoa(h))
		if err := os.MkdirAll(work, 0o755); err != nil {
			return TeamResult{}, err
		}
		if _, err := g.spawnTroupe(ctx, fmt.Sprintf("host %d", h), s.at(childConfig{
			Role: roleHost, Team: teamName, Agents: names[h], Targets: targets, Host: h, Dir: work,
			N: c.Pings, GapMax: c.PingGap, Idle: c.Idle,
		})); err != nil {
			return TeamResult{}, err
		}
	}
	if err := g.waitReady(ctx); err != nil {
		return TeamResult{}, err
	}
	start, err := g.release(g.kids)
	if err != nil {
		return TeamResult{}, err
	}
	res = TeamResult{Teammates: c.Teammates, Hosts: c.Hosts, Tasks: c.Tasks, Chain: c.Chain}
	claimedBy := map[string][]string{}
	var spawned, idled, pinged int
	var idleCPU time.Duration
	var perIdle int64
	called, returned, seen := map[string]int64{}, map[string]int64{}, map[string]int64{}
	handle := func(ev event) error {
		rec := ev.rec
		switch rec.Kind {
		case kindSpawned:
			spawned++
			res.SpawnS = max(res.SpawnS, float64(rec.End-start)/1e9)
			perIdle += rec.PerIdle
		case kindIdle:
			idled++
			idleCPU += time.Duration(rec.CPU)
			res.HostRSSMB = append(res.HostRSSMB, float64(rec.RSS)/(1<<20))
		case kindPinged:
			pinged++
		case kindDumped:
			res.Dumps = append(res.Dumps, rec.ID)
		case kindSeen:
			if _, dup := seen[rec.ID]; !dup {
				seen[rec.ID] = rec.Start
			}
		case kindOp:
			switch {
			case rec.Outcome == outWon && rec.End == 0: // a claim; Err names the claimer
				claimedBy[rec.ID] = append(claimedBy[rec.ID], rec.Err)
				res.Claims++
			case rec.Outcome == outOK:
				called[rec.ID], returned[rec.ID] = rec.Start, rec.End
			default:
				if len(res.Errors) < maxExamples {
					res.Errors = append(res.Errors, fmt.Sprintf("%s: %s %s", ev.from.name, rec.Outcome, rec.Err))
				}
			}
		}
		return nil
	}
	phase := func(ctx context.Context, name string, round int, until func() bool) error {
		line, err := json.Marshal(command{Phase: name, Round: round})
		if err != nil {
			return err
		}
		for _, k := range g.kids {
			if err := k.send(string(line)); err != nil {
				return err
			}
		}
		return g.collectUntil(ctx, until, nil, handle)
	}
	progress := func() {
		r.progressf("  %s: %d/%d hosts spawned after %.1f s", label, spawned, c.Hosts, time.Since(time.Unix(0, start)).Seconds())
	}
	if err := g.collectUntil(ctx, func() bool { return spawned == c.Hosts }, progress, handle); err != nil {
		return TeamResult{}, err
	}
	res.IdleTeammateKB = float64(perIdle) / float64(c.Hosts) / 1024
	// settle waits, within --timeout, until every teammate is idle in the
	// team file again.
	settle := func() error {
		sctx, cancel := context.WithTimeout(ctx, c.Timeout)
		defer cancel()
		return waitSettled(sctx, s.teams, g, handle)
	}
	// The idle window starts once the team has settled: each teammate
	// reported its first idle before marking itself idle in the team
	// file, and those last writes (and, on NATS, every host's reading of
	// them) are not the idle team's cost.
	if err := settle(); err != nil {
		return res, fmt.Errorf("%s: %w", label, err)
	}
	r.progressf("%s: every teammate idle after %.1f s, settled after %.1f s; measuring %v of idle", label, res.SpawnS, float64(time.Now().UnixNano()-start)/1e9, c.Idle)
	if err := phase(ctx, phaseIdle, 0, func() bool { return idled == c.Hosts }); err != nil {
		return TeamResult{}, err
	}
	res.IdleS = c.Idle.Seconds()
	res.IdleCPUPct = 100 * idleCPU.Seconds() / c.Idle.Seconds()

	l := tasklist.New(s.tasks, teamName)
	if c.Tasks > 0 {
		r.progressf("%s: creating %d tasks in chains of %d", label, c.Tasks, c.Chain)
		dctx, cancel := context.WithTimeout(ctx, c.Timeout)
		defer cancel()
		began := time.Now()
		prev := ""
		for i := range c.Tasks {
			d := tasklist.Draft{Subject: "bench task " + strconv.Itoa(i), Description: "complete it"}
			if i%c.Chain != 0 && prev != "" {
				d.BlockedBy = []string{prev}
			}
			t, err := l.Create(dctx, d)
			if err != nil {
				return TeamResult{}, fmt.Errorf("create task %d: %w", i, err)
			}
			prev = t.ID
		}
		// Completion is read from the list itself, looked at again on
		// each change where the store can say (else every 50 ms, when the
		// hosts' claim events are taken too).
		var changed <-chan struct{}
		if w, ok := s.tasks.(tasklist.Watcher); ok {
			if ch, err := w.Watch(dctx, teamName); err == nil {
				changed = ch
			}
		}
		for {
			if err := drainEvents(g, handle); err != nil {
				return TeamResult{}, err
			}
			final, err := l.Tasks(dctx)
			if err != nil && dctx.Err() == nil {
				return res, fmt.Errorf("read the task list: %w", err)
			}
			done := 0
			for _, t := range final {
				if t.Status == tasklist.StatusCompleted {
					done++
				}
			}
			if done == c.Tasks {
				res.DrainS = time.Since(began).Seconds()
				if err := drainEvents(g, handle); err != nil {
					return TeamResult{}, err
				}
				res.DoubleClaims, res.Completed, res.Examples = checkDrain(claimedBy, final)
				break
			}
			if dctx.Err() != nil {
				res.DoubleClaims, res.Completed, res.Examples = checkDrain(claimedBy, final)
				return res, fmt.Errorf("%s: %d of %d tasks completed within %v (%d claimed)", label, done, c.Tasks, c.Timeout, res.Claims)
			}
			select {
			case _, open := <-changed:
				if !open {
					changed = nil
				}
			case <-time.After(50 * time.Millisecond):
			case <-dctx.Done():
			}
		}
		res.TasksPerS = float64(c.Tasks) / res.DrainS
		r.progressf("%s: %d tasks completed in %.1f s, %d claims, %d double", label, res.Completed, res.DrainS, res.Claims, res.DoubleClaims)
	}
	// pings runs one round of pings and summarizes it.
	pings := func(round int) (PingResult, error) {
		pctx, cancel := context.WithTimeout(ctx, c.Timeout)
		defer cancel()
		clear(called)
		clear(returned)
		clear(seen)
		pinged = 0
		// Every ping must wake its recipient within the timeout; those
		// that did not by then count as missing.
		want := c.Pings * c.Hosts
		line, err := json.Marshal(command{Phase: phasePing, Round: round})
		if err != nil {
			return PingResult{}, err
		}
		for _, k := range g.kids {
			if err := k.send(string(line)); err != nil {
				return PingResult{}, err
			}
		}
		mark := fmt.Sprintf("-%d-", round) // ping-<host>-<round>-<n>
		err = g.collectUntil(pctx, func() bool {
			n := 0
			for id := range seen {
				if strings.Contains(strings.TrimPrefix(id, "ping-"), mark) {
					n++
				}
			}
			return pinged == c.Hosts && n >= want
		}, nil, handle)
		if err != nil && pctx.Err() == nil {
			return PingResult{}, err
		}
		var pr PingResult
		var fromCall, fromReturn []float64
		for id, call := range called {
			pr.Pings++
			t, ok := seen[id]
			if !ok {
				pr.Missing++
				continue
			}
			fromCall = append(fromCall, spanMS(call, t))
			fromReturn = append(fromReturn, spanMS(returned[id], t))
		}
		pr.Delivery, pr.FromReturn = Summarize(fromCall), Summarize(fromReturn)
		if pr.Missing > 0 {
			// Where the teammates wait tells why one did not wake.
			dumped := len(res.Dumps)
			if err := phase(ctx, phaseDump, round, func() bool { return len(res.Dumps) == dumped+c.Hosts }); err != nil {
				return pr, err
			}
			r.progressf("%s: %d of %d pings of round %d woke nobody within %v; every host's goroutines are in %s", label, pr.Missing, pr.Pings, round, c.Timeout, strings.Join(res.Dumps[dumped:], ", "))
		}
		return pr, nil
	}
	if c.Pings > 0 {
		if c.Tasks > 0 {
			// Right after the drain: the team still settles.
			churn, err := pings(1)
			if err != nil {
				return TeamResult{}, err
			}
			res.Churn = &churn
			r.progressf("%s: delivery during the drain's tail p50 %.2f p99 %.2f ms; waiting for the team to settle", label, churn.Delivery.P50, churn.Delivery.P99)
			began := time.Now()
			if err := settle(); err != nil {
				return res, fmt.Errorf("%s: %w", label, err)
			}
			res.SettleS = time.Since(began).Seconds()
		}
		settled, err := pings(2)
		if err != nil {
			return TeamResult{}, err
		}
		res.Pings, res.Missing, res.Delivery, res.FromReturn = settled.Pings, settled.Missing, settled.Delivery, settled.FromReturn
		if res.Churn != nil {
			res.Missing += res.Churn.Missing
		}
		if err := settle(); err != nil {
			return res, fmt.Errorf("%s: after the first round to the settled team: %w", label, err)
		}
		again, err := pings(3)
		if err != nil {
			return TeamResult{}, err
		}
		res.Again = &again
		res.Missing += again.Missing
	}
	if err := g.finish(ctx); err != nil {
		return TeamResult{}, err
	}
	delivery := "no pings"
	if c.Pings > 0 {
		delivery = fmt.Sprintf("delivery p50 %.2f p99 %.2f ms, again p50 %.2f p99 %.2f ms (%d missing)", res.Delivery.P50, res.Delivery.P99, res.Again.Delivery.P50, res.Again.Delivery.P99, res.Missing)
	}
	r.progressf("%s: spawn %.1f s, idle %.1f%% of a core, %.0f KiB per idle teammate, %s, %d double claims",
		label, res.SpawnS, res.IdleCPUPct, res.IdleTeammateKB, delivery, res.DoubleClaims)
	return res, nil
}

// readLead reads the bench team's lead inbox and marks what it read, on
// each change (or every 50 ms, without a watch), until ctx ends:
// the lead's inbox pump, without a lead.
func readLead(ctx context.Context, mail mailbox.Store) {
	changed, err := mail.Watch(ctx, teamName, team.LeadName)
	if err != nil {
		changed = nil // look every 50 ms
	}
	for {
		msgs, err := mail.Read(ctx, teamName, team.LeadName, true)
		if err == nil && len(msgs) > 0 {
			ids := make([]string, 0, len(msgs))
			for _, m := range msgs {
				if m.ID != "" {
					ids = append(ids, m.ID)
				}
			}
			_, _ = mail.MarkRead(ctx, teamName, team.LeadName, ids)
		}
		select {
		case _, open := <-changed:
			if !open {
				changed = nil
			}
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			return
		}
	}
}

// waitSettled waits until no teammate of the bench team is marked active
// in the team file (those that lost their last claims linger, then go
// idle), handling the hosts' events meanwhile.
func waitSettled(ctx context.Context, teams team.Store, g *group, handle func(event) error) error {
	for {
		if err := drainEvents(g, handle); err != nil {
			return err
		}
		c, err := teams.Get(ctx, teamName)
		if err != nil && ctx.Err() == nil {
			return fmt.Errorf("read the team: %w", err)
		}
		active := 0
		for _, m := range c.Members {
			if !m.IsLead() && m.Active() {
				active++
			}
		}
		if err == nil && active == 0 {
			return nil
		}
		select {
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			return fmt.Errorf("the team did not settle (%d teammates still active): %w", active, context.Cause(ctx))
		}
	}
}

// drainEvents handles the events already waiting, without blocking; a
// child that ended or wrote garbage is an error.
func drainEvents(g *group, handle func(event) error) error {
	for {
		select {
		case ev := <-g.events:
			switch {
			case ev.eof:
				ev.from.done = true
				return died(ev.from)
			case ev.err != nil:
				return fmt.Errorf("%s: %w", ev.from.name, ev.err)
			}
			if err := handle(ev); err != nil {
				return err
			}
		default:
			return nil
		}
	}
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}
