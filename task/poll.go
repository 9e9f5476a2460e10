package task

import (
	"context"
	"os"
	"time"
)

// Report is what one poll step found.
type Report struct {
	Output  []Chunk // new output, per task
	Evicted []ID    // tasks removed
}

// Chunk is output of one task, read from Offset (past what the output's
// cap dropped, when it dropped what had not been reported yet).
type Chunk struct {
	ID     ID
	Offset int64
	Data   []byte

	asked int64 // the task's OutputOffset when read
}

// pollPlan is what a poll step should do, decided from a snapshot.
type pollPlan struct {
	read  []readReq // output to read
	evict []ID      // candidates, re-checked on fresh state
}

type readReq struct {
	id     ID
	file   string
	offset int64
}

// planPoll decides a poll step from a snapshot. It is a pure function.
// Tasks evicted in the same step are still read first, so their last
// output is reported.
func planPoll(tasks []State, now time.Time) pollPlan {
	var p pollPlan
	for _, s := range tasks {
		if s.OutputFile != "" {
			p.read = append(p.read, readReq{s.ID, s.OutputFile, s.OutputOffset})
		}
		if Evictable(s, now) {
			p.evict = append(p.evict, s.ID)
		}
	}
	return p
}

// Evictable reports whether s may leave the registry at now: it is
// terminal, notified, not retained, and its grace period is over. It is a
// pure function.
func Evictable(s State, now time.Time) bool {
	return s.Status.Terminal() && s.Notified && !s.Retain &&
		!s.EvictAfter.IsZero() && !now.Before(s.EvictAfter)
}

// Poll runs one poll step: it reads, for each task, the output added since
// its OutputOffset (up to Config.MaxPollRead; from where the output's cap
// left it, when the cap dropped some first), advances the offsets, and
// evicts the tasks Evictable at the clock's time, removing their output
// files (the seed's evictTaskOutput: a task is evicted only once its
// notification went out and Config.Grace passed; Registry.Evicted still
// tells what it was). Offsets and evictions are
// applied on the registry's fresh state: an offset moves only if nobody
// moved it meanwhile, and a task is evicted only if it is still evictable,
// so a concurrent change is never overwritten. It emits EventOutput and
// EventEvicted. The poll loop calls it every Config.PollInterval.
func (r *Registry) Poll(ctx context.Context) (Report, error) {
	now := r.clock.Now()
	r.mu.Lock()
	snap := make([]State, 0, len(r.tasks))
	for _, s := range r.tasks {
		snap = append(snap, s)
	}
	r.mu.Unlock()
	plan := planPoll(snap, now)

	var rep Report
	for _, q := range plan.read {
		if err := context.Cause(ctx); err != nil {
			return rep, err
		}
		rd, err := ReadOutputAt(q.file, q.offset, r.cfg.MaxPollRead)
		if err != nil || len(rd.Data) == 0 {
			continue // a missing or unreadable file has nothing new
		}
		rep.Output = append(rep.Output, Chunk{ID: q.id, Offset: rd.Offset, Data: rd.Data, asked: q.offset})
	}

	if r.testHookPollRead != nil {
		r.testHookPollRead()
	}
	var files []string // the evicted tasks' output, removed after the lock
	defer func() {
		for _, f := range files {
			os.Remove(f) // gone already: nothing to give back
		}
	}()
	r.mu.Lock()
	defer r.mu.Unlock()
	kept := rep.Output[:0]
	for _, c := range rep.Output {
		s, ok := r.tasks[c.ID]
		if !ok || s.OutputOffset != c.asked {
			continue // reported by someone else meanwhile
		}
		s.OutputOffset = c.Offset + int64(len(c.Data))
		r.tasks[c.ID] = s
		kept = append(kept, c)
		r.emitLocked(Event{Kind: EventOutput, State: s, Output: c.Data, Offset: c.Offset})
	}
	rep.Output = kept
	for _, id := range plan.evict {
		s, ok := r.tasks[id]
		if !ok || !Evictable(s, now) {
			continue
		}
		delete(r.tasks, id)
		delete(r.runs, id)
		delete(r.kills, id)
		delete(r.stopping, id)
		gone := s
		gone.Detail = nil // an agent's messages need not outlive it
		r.evicted[id] = gone
		if r.ownsOutput(s) {
			files = append(files, s.OutputFile)
		}
		rep.Evicted = append(rep.Evicted, id)
		r.emitLocked(Event{Kind: EventEvicted, State: s})
	}
	return rep, nil
}

// pollLoop runs Poll every PollInterval until ctx ends.
func (r *Registry) pollLoop(ctx context.Context) {
	t := r.clock.NewTicker(r.cfg.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			r.Poll(ctx)
		}
	}
}
