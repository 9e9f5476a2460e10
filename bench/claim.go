package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/troupe-dev/troupe/tasklist"
)

// RaceConfig is scenario B6: Agents claimer processes race ClaimTask on one
// fresh task (in a fresh list) per round, for Rounds rounds.
type RaceConfig struct {
	Agents int
	Rounds int
}

// RaceResult is the outcome of a Race run.
type RaceResult struct {
	Agents int `json:"agents"`
	Rounds int `json:"rounds"`
	// Violations counts rounds without exactly one winner, or whose stored
	// owner is not the winner.
	Violations int `json:"violations"`
	// Outcomes counts every claim: won, claimed (owned by someone else),
	// not-found, other.
	Outcomes map[string]int `json:"outcomes"`
	// Latency is the duration of every ClaimTask call.
	Latency    Summary  `json:"latency"`
	FirstError string   `json:"first_error,omitempty"`
	Examples   []string `json:"examples,omitempty"`
}

// Race runs scenario B6.
func (r *Runner) Race(ctx context.Context, c RaceConfig) (RaceResult, error) {
	if err := r.check(); err != nil {
		return RaceResult{}, err
	}
	if c.Agents < 1 || c.Rounds < 1 {
		return RaceResult{}, fmt.Errorf("bench: claim race of %d agents × %d rounds: want at least 1 × 1", c.Agents, c.Rounds)
	}
	label := fmt.Sprintf("claim race A=%d rounds=%d", c.Agents, c.Rounds)
	dir, cleanup, err := r.runDir("race")
	if err != nil {
		return RaceResult{}, err
	}
	defer cleanup()
	s, err := r.openRun(ctx, dir)
	if err != nil {
		return RaceResult{}, err
	}
	defer s.close()
	r.progressf("%s: starting %d claimer processes", label, c.Agents)
	g := r.newGroup()
	defer g.abort()
	for i := range c.Agents {
		if _, err := g.spawnTroupe(ctx, fmt.Sprintf("claimer %d", i), s.at(childConfig{Role: roleClaim, Agent: agentName(i)})); err != nil {
			return RaceResult{}, err
		}
	}
	if err := g.waitReady(ctx); err != nil {
		return RaceResult{}, err
	}
	res := RaceResult{Agents: c.Agents, Rounds: c.Rounds, Outcomes: map[string]int{}}
	var lat []float64
	began := time.Now()
	round := 0
	progress := func() {
		r.progressf("  %s: round %d/%d after %.1f s", label, round+1, c.Rounds, time.Since(began).Seconds())
	}
	for ; round < c.Rounds; round++ {
		list := "race-" + strconv.Itoa(round)
		task, err := tasklist.New(s.tasks, list).Create(ctx, tasklist.Draft{Subject: "race " + strconv.Itoa(round)})
		if err != nil {
			return RaceResult{}, err
		}
		line, _ := json.Marshal(command{Go: true, List: list, ID: task.ID})
		for _, k := range g.kids {
			if err := k.send(string(line)); err != nil {
				return RaceResult{}, err
			}
		}
		got := 0
		var winners []string
		err = g.collectUntil(ctx, func() bool { return got == c.Agents }, progress, func(ev event) error {
			if ev.rec.Kind != kindOp {
				return nil
			}
			got++
			lat = append(lat, spanMS(ev.rec.Start, ev.rec.End))
			res.Outcomes[ev.rec.Outcome]++
			if ev.rec.Outcome == outWon {
				winners = append(winners, agentName(ev.from.index))
			} else if ev.rec.Outcome != outClaimed && res.FirstError == "" {
				res.FirstError = ev.rec.Err
			}
			return nil
		})
		if err != nil {
			return RaceResult{}, err
		}
		stored, _, err := s.tasks.Get(ctx, list, task.ID)
		if err != nil {
			return RaceResult{}, fmt.Errorf("round %d: %w", round, err)
		}
		if v := raceViolation(winners, stored); v != "" {
			res.Violations++
			if len(res.Examples) < maxExamples {
				res.Examples = append(res.Examples, fmt.Sprintf("round %d: %s", round, v))
			}
		}
	}
	if err := g.finish(ctx); err != nil {
		return RaceResult{}, err
	}
	res.Latency = Summarize(lat)
	r.progressf("%s: %d violations, outcomes %v, p50 %.1f ms, p99 %.1f ms", label, res.Violations, res.Outcomes, res.Latency.P50, res.Latency.P99)
	return res, nil
}

// raceViolation describes what is wrong with a round, or returns "".
func raceViolation(winners []string, stored tasklist.Task) string {
	switch {
	case len(winners) != 1:
		return fmt.Sprintf("%d winners %v", len(winners), winners)
	case stored.Owner != winners[0] || stored.Status != tasklist.StatusInProgress:
		return fmt.Sprintf("winner %s, but the task is %s and owned by %q", winners[0], stored.Status, stored.Owner)
	}
	return ""
}

func agentName(i int) string { return "agent-" + strconv.Itoa(i) }

// DrainConfig is scenario B7: Agents processes each loop Claim, then
// complete, until none of Tasks independent tasks is left.
type DrainConfig struct {
	Agents int
	Tasks  int
}

// DrainResult is the outcome of a Drain run.
type DrainResult struct {
	Agents int `json:"agents"`
	Tasks  int `json:"tasks"`
	// WallS runs from the barrier to the last agent's last call.
	WallS     float64 `json:"wall_s"`
	TasksPerS float64 `json:"tasks_per_s"`
	// Claims counts successful claims; DoubleClaims the tasks claimed by
	// more than one agent (or twice).
	Claims       int `json:"claims"`
	DoubleClaims int `json:"double_claims"`
	// Completed counts tasks stored completed and owned by their claimer.
	Completed int `json:"completed"`
	// Wasted counts compare-and-swaps lost inside Claim (the task changed
	// or went between the agent's read and its write).
	Wasted int `json:"wasted"`
	// Busy counts tasks Claim passed over because another agent was
	// writing them (it did not wait for them).
	Busy int `json:"busy"`
	// Errors counts failed Claim and Update calls by outcome.
	Errors map[string]int `json:"errors,omitempty"`
	// Latency is the duration of the successful Claim calls: reading the
	// list, and every attempt until one won.
	Latency Summary `json:"latency"`
	// Write is the duration of each successful Claim's winning write alone
	// (lock, compare, write, sync, unlock), which is what the peer's claim
	// latency covers: one claimTask call that succeeded, without the
	// listing before it or the lost attempts.
	Write      Summary  `json:"write"`
	FirstError string   `json:"first_error,omitempty"`
	Examples   []string `json:"examples,omitempty"`
}

// Drain runs scenario B7.
func (r *Runner) Drain(ctx context.Context, c DrainConfig) (DrainResult, error) {
	if err := r.check(); err != nil {
		return DrainResult{}, err
	}
	if c.Agents < 1 || c.Tasks < 1 {
		return DrainResult{}, fmt.Errorf("bench: drain of %d tasks by %d agents: want at least 1 × 1", c.Tasks, c.Agents)
	}
	label := fmt.Sprintf("drain A=%d tasks=%d", c.Agents, c.Tasks)
	dir, cleanup, err := r.runDir("drain")
	if err != nil {
		return DrainResult{}, err
	}
	defer cleanup()
	s, err := r.openRun(ctx, dir)
	if err != nil {
		return DrainResult{}, err
	}
	defer s.close()
	const list = "drain"
	l := tasklist.New(s.tasks, list)
	for i := range c.Tasks {
		if _, err := l.Create(ctx, tasklist.Draft{Subject: "task " + strconv.Itoa(i)}); err != nil {
			return DrainResult{}, err
		}
	}
	r.progressf("%s: starting %d agent processes", label, c.Agents)
	g := r.newGroup()
	defer g.abort()
	for i := range c.Agents {
		if _, err := g.spawnTroupe(ctx, fmt.Sprintf("agent %d", i), s.at(childConfig{Role: roleDrain, List: list, Agent: agentName(i)})); err != nil {
			return DrainResult{}, err
		}
	}
	if err := g.waitReady(ctx); err != nil {
		return DrainResult{}, err
	}
	start, err := g.release(g.kids)
	if err != nil {
		return DrainResult{}, err
	}
	res := DrainResult{Agents: c.Agents, Tasks: c.Tasks, Errors: map[string]int{}}
	claimedBy := map[string][]string{} // task id -> claimers
	var lat, writes []float64
	end := start
	progress := func() {
		r.progressf("  %s: %d/%d claimed after %.1f s", label, res.Claims, c.Tasks, time.Since(time.Unix(0, start)).Seconds())
	}
	err = g.collect(ctx, progress, func(ev event) error {
		rec := ev.rec
		if rec.Kind != kindOp {
			return nil
		}
		end = max(end, rec.End)
		res.Wasted += rec.Wasted
		res.Busy += rec.Busy
		switch rec.Outcome {
		case outWon:
			res.Claims++
			lat = append(lat, spanMS(rec.Start, rec.End))
			writes = append(writes, float64(rec.Write)/1e6)
			claimedBy[rec.ID] = append(claimedBy[rec.ID], agentName(ev.from.index))
		case outNoneReady:
		default:
			res.Errors[rec.Outcome]++
			if res.FirstError == "" {
				res.FirstError = rec.Err
			}
		}
		return nil
	})
	if err != nil {
		return DrainResult{}, err
	}
	if err := g.finish(ctx); err != nil {
		return DrainResult{}, err
	}
	res.WallS = float64(end-start) / 1e9
	if res.WallS > 0 {
		res.TasksPerS = float64(c.Tasks) / res.WallS
	}
	res.Latency = Summarize(lat)
	res.Write = Summarize(writes)
	tasks, err := l.Tasks(ctx)
	if err != nil && !errors.Is(err, tasklist.ErrCorrupt) {
		return DrainResult{}, err
	}
	res.DoubleClaims, res.Completed, res.Examples = checkDrain(claimedBy, tasks)
	r.progressf("%s: %.1f tasks/s in %.2f s, %d claims, %d double claims, %d completed, %d wasted, %d busy, claim p50 %.1f ms, p99 %.1f ms, winning write p50 %.1f ms, p99 %.1f ms",
		label, res.TasksPerS, res.WallS, res.Claims, res.DoubleClaims, res.Completed, res.Wasted, res.Busy, res.Latency.P50, res.Latency.P99, res.Write.P50, res.Write.P99)
	return res, nil
}

// checkDrain compares who claimed what with the final tasks: it counts
// tasks claimed more than once, and tasks completed by their one claimer.
func checkDrain(claimedBy map[string][]string, final []tasklist.Task) (doubles, completed int, examples []string) {
	note := func(format string, args ...any) {
		if len(examples) < maxExamples {
			examples = append(examples, fmt.Sprintf(format, args...))
		}
	}
	for id, who := range claimedBy {
		if len(who) > 1 {
			doubles++
			note("task %s claimed by %v", id, who)
		}
	}
	for _, t := range final {
		who := claimedBy[t.ID]
		switch {
		case len(who) == 0:
			note("task %s never claimed (%s)", t.ID, t.Status)
		case t.Status == tasklist.StatusCompleted && t.Owner == who[0] && len(who) == 1:
			completed++
		default:
			note("task %s is %s, owned by %q; claimed by %v", t.ID, t.Status, t.Owner, who)
		}
	}
	return doubles, completed, examples
}
