package bench

import (
	"context"
	"fmt"
	"time"
)

// WritersConfig is one run of scenarios B1 to B3: Writers processes send
// Msgs messages each, back to back, into one inbox that holds Preload
// unread messages at the start.
type WritersConfig struct {
	Writers int
	Msgs    int
	Preload int
	// Text is the length of each message's text; zero means DefaultText.
	Text int
	// Rep numbers the repetition, for the report.
	Rep int
}

// WritersResult is the outcome of one Writers run.
type WritersResult struct {
	Writers   int `json:"writers"`
	Msgs      int `json:"msgs"`
	Preload   int `json:"preload"`
	Rep       int `json:"rep"`
	Attempted int `json:"attempted"`
	OK        int `json:"ok"`
	Failed    int `json:"failed"`
	// Failures counts failed sends by outcome (lock-timeout, pending, other).
	Failures   map[string]int `json:"failures,omitempty"`
	FirstError string         `json:"first_error,omitempty"`
	// WallS runs from the barrier to the last send's return.
	WallS  float64 `json:"wall_s"`
	OKPerS float64 `json:"ok_per_s"`
	// Latency is the duration of every send call, failed ones included.
	Latency    Summary `json:"latency"`
	FinalBytes int64   `json:"final_bytes"`
	// WriterCPUMS is the user plus system CPU time of all writer processes.
	WriterCPUMS float64 `json:"writer_cpu_ms"`
	// Verify checks the final inbox against every send and the preload.
	Verify Tally `json:"verify"`
	// InvalidInbox is set when the final inbox did not parse.
	InvalidInbox string `json:"invalid_inbox,omitempty"`
}

// Writers runs one B1-B3 scenario.
func (r *Runner) Writers(ctx context.Context, c WritersConfig) (WritersResult, error) {
	if err := r.check(); err != nil {
		return WritersResult{}, err
	}
	if c.Writers < 1 || c.Msgs < 1 || c.Preload < 0 {
		return WritersResult{}, fmt.Errorf("bench: writers %d × msgs %d (preload %d): want at least 1 × 1", c.Writers, c.Msgs, c.Preload)
	}
	if c.Text <= 0 {
		c.Text = DefaultText
	}
	label := fmt.Sprintf("writers W=%d M=%d preload=%d rep=%d", c.Writers, c.Msgs, c.Preload, c.Rep)
	dir, cleanup, err := r.runDir("writers")
	if err != nil {
		return WritersResult{}, err
	}
	defer cleanup()
	run, err := r.newMailRun(ctx, dir, c.Preload, false, c.Text)
	if err != nil {
		return WritersResult{}, err
	}
	defer run.close()
	r.progressf("%s: starting %d writer processes", label, c.Writers)
	g := r.newGroup()
	defer g.abort()
	for i := range c.Writers {
		if _, err := g.spawnTroupe(ctx, fmt.Sprintf("writer %d", i), run.at(childConfig{
			Role: roleSend, Team: benchTeam, To: benchInbox,
			From: fmt.Sprintf("w%d", i), N: c.Msgs, Text: c.Text,
		})); err != nil {
			return WritersResult{}, err
		}
	}
	if err := g.waitReady(ctx); err != nil {
		return WritersResult{}, err
	}
	start, err := g.release(g.kids)
	if err != nil {
		return WritersResult{}, err
	}
	res := WritersResult{Writers: c.Writers, Msgs: c.Msgs, Preload: c.Preload, Rep: c.Rep, Failures: map[string]int{}}
	sent := preloaded(c.Preload)
	var lat []float64
	end := start
	progress := func() {
		r.progressf("  %s: %d/%d sends returned (%d failed) after %.1f s", label, res.Attempted, c.Writers*c.Msgs, res.Failed, time.Since(time.Unix(0, start)).Seconds())
	}
	err = g.collect(ctx, progress, func(ev event) error {
		if ev.rec.Kind != kindOp {
			return nil
		}
		rec := ev.rec
		res.Attempted++
		lat = append(lat, spanMS(rec.Start, rec.End))
		end = max(end, rec.End)
		ok := rec.Outcome == outOK
		sent[rec.ID] = ok
		if ok {
			res.OK++
			return nil
		}
		res.Failed++
		res.Failures[rec.Outcome]++
		if res.FirstError == "" {
			res.FirstError = rec.Err
		}
		return nil
	})
	if err != nil {
		return WritersResult{}, err
	}
	if err := g.finish(ctx); err != nil {
		return WritersResult{}, err
	}
	res.WriterCPUMS = cpuMS(g.kids)
	res.WallS = float64(end-start) / 1e9
	if res.WallS > 0 {
		res.OKPerS = float64(res.OK) / res.WallS
	}
	res.Latency = Summarize(lat)
	f, err := run.readInbox(ctx)
	if err != nil {
		res.InvalidInbox = err.Error()
	}
	res.FinalBytes = f.Bytes
	res.Verify = Verify(sent, f.IDs)
	r.progressf("%s: %d/%d ok, %d failed, %.1f msg/s, p50 %.1f ms, p99 %.1f ms, max %.1f ms; lost %d, duplicates %d, phantoms %d",
		label, res.OK, res.Attempted, res.Failed, res.OKPerS, res.Latency.P50, res.Latency.P99, res.Latency.Max,
		res.Verify.Lost, res.Verify.Duplicates, res.Verify.Phantoms)
	return res, nil
}
