package bench

import (
	"context"
	"fmt"
	"time"
)

// DeliveryConfig is scenario B4: one writer process sends N messages at
// random gaps in [GapMin, GapMax] into an inbox holding Preload read
// messages, while a watcher process waits on mailbox.Store.Watch and Reads.
type DeliveryConfig struct {
	N       int
	Preload int
	GapMin  time.Duration
	GapMax  time.Duration
	// Text is the length of each message's text; zero means DefaultText.
	Text int
	// Settle is how long the watcher may still take after the last send
	// before the messages it has not seen count as missing; zero means 2 s.
	Settle time.Duration
}

// DeliveryResult is the outcome of a Delivery run.
type DeliveryResult struct {
	N        int     `json:"n"`
	Preload  int     `json:"preload"`
	GapMinMS float64 `json:"gap_min_ms"`
	GapMaxMS float64 `json:"gap_max_ms"`
	Sent     int     `json:"sent"`
	Failed   int     `json:"failed"`
	// Latency, the headline, runs from the writer's Send call to the
	// watcher's Read that first showed the message (wall clock, one
	// machine), as the peer measures it: the whole send is included.
	Latency Summary `json:"latency"`
	// FromReturn runs from the writer's Send returning to that Read. It
	// can be negative: once stored, a message is visible while the send
	// is still on its way back.
	FromReturn Summary `json:"from_return"`
	// Missing counts sent messages the watcher never saw.
	Missing    int `json:"missing"`
	Reads      int `json:"reads"`
	Kicks      int `json:"kicks"`
	ReadErrors int `json:"read_errors"`
	// ReaderCPUMS is the watcher process's user plus system CPU time
	// (getrusage), start-up included.
	ReaderCPUMS float64 `json:"reader_cpu_ms"`
	// SendLatency is the duration of the writer's Send calls.
	SendLatency Summary `json:"send_latency"`
	FirstError  string  `json:"first_error,omitempty"`
}

const kindSettled = "settled" // internal: the settle time after the last send passed

// Delivery runs scenario B4.
func (r *Runner) Delivery(ctx context.Context, c DeliveryConfig) (DeliveryResult, error) {
	if err := r.check(); err != nil {
		return DeliveryResult{}, err
	}
	if c.N < 1 || c.GapMin < 0 || c.GapMax < c.GapMin {
		return DeliveryResult{}, fmt.Errorf("bench: delivery of %d messages at gaps %v-%v: want n >= 1 and 0 <= min <= max", c.N, c.GapMin, c.GapMax)
	}
	if c.Text <= 0 {
		c.Text = DefaultText
	}
	if c.Settle <= 0 {
		c.Settle = 2 * time.Second
	}
	label := fmt.Sprintf("delivery N=%d gaps %v-%v preload=%d", c.N, c.GapMin, c.GapMax, c.Preload)
	dir, cleanup, err := r.runDir("delivery")
	if err != nil {
		return DeliveryResult{}, err
	}
	defer cleanup()
	run, err := r.newMailRun(ctx, dir, c.Preload, true, c.Text)
	if err != nil {
		return DeliveryResult{}, err
	}
	defer run.close()
	r.progressf("%s: starting a watcher and a writer process (about %.0f s)", label, float64(c.N)*(c.GapMin+c.GapMax).Seconds()/2)
	g := r.newGroup()
	defer g.abort()
	watcher, err := g.spawnTroupe(ctx, "watcher", run.at(childConfig{Role: roleWatch, Team: benchTeam, Agent: benchInbox}))
	if err != nil {
		return DeliveryResult{}, err
	}
	writer, err := g.spawnTroupe(ctx, "writer", run.at(childConfig{
		Role: roleSend, Team: benchTeam, To: benchInbox, From: "d",
		N: c.N, Text: c.Text, GapMin: c.GapMin, GapMax: c.GapMax,
	}))
	if err != nil {
		return DeliveryResult{}, err
	}
	if err := g.waitReady(ctx); err != nil {
		return DeliveryResult{}, err
	}
	start, err := g.release([]*child{writer})
	if err != nil {
		return DeliveryResult{}, err
	}

	res := DeliveryResult{N: c.N, Preload: c.Preload, GapMinMS: ms(c.GapMin), GapMaxMS: ms(c.GapMax)}
	returned := map[string]int64{} // acknowledged id -> Send's return
	called := map[string]int64{}   // acknowledged id -> Send's call
	seen := map[string]int64{}     // id -> first seen
	var sendLat []float64
	settled := false
	var settle *time.Timer
	defer func() {
		if settle != nil {
			settle.Stop()
		}
	}()
	allSeen := func() bool {
		for id := range returned {
			if _, ok := seen[id]; !ok {
				return false
			}
		}
		return true
	}
	handle := func(ev event) error {
		rec := ev.rec
		switch {
		case rec.Kind == kindSeen:
			seen[rec.ID] = rec.Start
		case rec.Kind == kindOp && ev.from == watcher:
			res.ReadErrors++
			if res.FirstError == "" {
				res.FirstError = "read: " + rec.Err
			}
		case rec.Kind == kindOp:
			sendLat = append(sendLat, spanMS(rec.Start, rec.End))
			if rec.Outcome != outOK {
				res.Failed++
				if res.FirstError == "" {
					res.FirstError = rec.Err
				}
				return nil
			}
			res.Sent++
			returned[rec.ID] = rec.End
			called[rec.ID] = rec.Start
		case rec.Kind == kindDone && ev.from == writer:
			settle = time.AfterFunc(c.Settle, func() {
				g.deliver(event{from: writer, rec: record{Kind: kindSettled}})
			})
		case rec.Kind == kindSettled:
			settled = true
		case rec.Kind == kindDone && ev.from == watcher:
			res.Reads, res.Kicks = rec.Reads, rec.Kicks
		}
		return nil
	}
	progress := func() {
		r.progressf("  %s: %d/%d sent, %d seen after %.1f s", label, res.Sent, c.N, len(seen), time.Since(time.Unix(0, start)).Seconds())
	}
	err = g.collectUntil(ctx, func() bool { return writer.finished && (settled || allSeen()) }, progress, handle)
	if err != nil {
		return DeliveryResult{}, err
	}
	watcher.cmd.Close() // stops the watcher, which then reports its counts
	if err := g.collect(ctx, progress, handle); err != nil {
		return DeliveryResult{}, err
	}
	if err := g.finish(ctx); err != nil {
		return DeliveryResult{}, err
	}
	res.ReaderCPUMS = cpuMS([]*child{watcher})
	var fromCall, fromReturn []float64
	for id, ret := range returned {
		if t, ok := seen[id]; ok {
			fromCall = append(fromCall, spanMS(called[id], t))
			fromReturn = append(fromReturn, spanMS(ret, t))
		} else {
			res.Missing++
		}
	}
	res.Latency = Summarize(fromCall)
	res.FromReturn = Summarize(fromReturn)
	res.SendLatency = Summarize(sendLat)
	r.progressf("%s: from the send's call p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms (from its return: p50 %.2f, p99 %.2f); missing %d, %d reads, reader CPU %.0f ms",
		label, res.Latency.P50, res.Latency.P90, res.Latency.P99, res.Latency.Max, res.FromReturn.P50, res.FromReturn.P99, res.Missing, res.Reads, res.ReaderCPUMS)
	return res, nil
}
