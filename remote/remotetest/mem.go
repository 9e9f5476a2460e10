// Package remotetest is an in-memory remote.Queue and remote.Registry for
// tests, with the same redelivery and expiry rules as a real transport:
// a delivery not kept alive for AckWait goes out again, a registration not
// refreshed for TTL is gone. Conn gives each party its own handle, which a
// test can Cut to make that party vanish as a crashed process would.
package remotetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/troupe-dev/troupe/remote"
)

// Mem is the shared state: the queue, the runs, the events and the workers.
type Mem struct {
	AckWait, TTL time.Duration

	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every change
	queue   []*item
	runs    map[string]int
	events  map[string][]remote.Event
	workers map[string]remote.WorkerInfo
	seen    map[string]time.Time
	Taken   int // deliveries handed out, label mismatches included
}

type item struct {
	job       remote.Job
	notBefore time.Time // naked with a delay
	holder    *Conn     // nil when queued
	deadline  time.Time // of the holder's heartbeat
	gen       int       // bumps on each delivery; stale deliveries fail
	done      bool
}

// New returns an empty Mem.
func New(ackWait, ttl time.Duration) *Mem {
	return &Mem{AckWait: ackWait, TTL: ttl, changed: make(chan struct{}), runs: map[string]int{},
		events: map[string][]remote.Event{}, workers: map[string]remote.WorkerInfo{}, seen: map[string]time.Time{}}
}

func (m *Mem) kickLocked() {
	close(m.changed)
	m.changed = make(chan struct{})
}

// Conn is one party's handle on m.
type Conn struct {
	m   *Mem
	cut bool // guarded by m.mu
}

// Conn returns a new handle.
func (m *Mem) Conn() *Conn { return &Conn{m: m} }

// Cut makes every later call of c fail, as if its process died.
func (c *Conn) Cut() {
	c.m.mu.Lock()
	c.cut = true
	c.m.mu.Unlock()
}

var errCut = fmt.Errorf("remotetest: connection cut")

// Runs returns how many runs of job id were started.
func (m *Mem) Runs(id string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.runs[id]
}

// Queued returns the ids of the jobs not yet done (acked or terminated).
func (m *Mem) Queued() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var ids []string
	for _, it := range m.queue {
		if !it.done {
			ids = append(ids, it.job.ID)
		}
	}
	return ids
}

// Submit implements remote.Queue.
func (c *Conn) Submit(_ context.Context, j remote.Job) error {
	if err := j.Validate(); err != nil {
		return err
	}
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if c.cut {
		return errCut
	}
	m.queue = append(m.queue, &item{job: j})
	m.kickLocked()
	return nil
}

// Take implements remote.Queue.
func (c *Conn) Take(ctx context.Context) (remote.Delivery, error) {
	m := c.m
	for {
		m.mu.Lock()
		if c.cut {
			m.mu.Unlock()
			return nil, errCut
		}
		now := time.Now()
		next := now.Add(time.Hour)
		for _, it := range m.queue {
			if it.done {
				continue
			}
			if it.holder != nil && now.After(it.deadline) {
				it.holder = nil // its worker stopped beating
			}
			if it.holder != nil {
				next = earlier(next, it.deadline)
				continue
			}
			if now.Before(it.notBefore) {
				next = earlier(next, it.notBefore)
				continue
			}
			it.holder, it.deadline = c, now.Add(m.AckWait)
			it.gen++
			m.Taken++
			d := &delivery{c: c, it: it, gen: it.gen}
			m.mu.Unlock()
			return d, nil
		}
		ch := m.changed
		m.mu.Unlock()
		t := time.NewTimer(time.Until(next) + time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, context.Cause(ctx)
		case <-ch:
		case <-t.C:
		}
		t.Stop()
	}
}

// Publish implements remote.Queue.
func (c *Conn) Publish(_ context.Context, e remote.Event) error {
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if c.cut {
		return errCut
	}
	m.events[e.JobID] = append(m.events[e.JobID], e)
	m.kickLocked()
	return nil
}

// LastEvent implements remote.Recaller.
func (c *Conn) LastEvent(_ context.Context, jobID string) (remote.Event, error) {
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if c.cut {
		return remote.Event{}, errCut
	}
	evs := m.events[jobID]
	if len(evs) == 0 {
		return remote.Event{}, fmt.Errorf("job %s: %w", jobID, remote.ErrUnknownJob)
	}
	return evs[len(evs)-1], nil
}

var _ remote.Recaller = (*Conn)(nil)

// Watch implements remote.Queue.
func (c *Conn) Watch(ctx context.Context, jobID string) (<-chan remote.Event, error) {
	out := make(chan remote.Event)
	go func() {
		defer close(out)
		m := c.m
		for n := 0; ; {
			m.mu.Lock()
			evs := slices.Clone(m.events[jobID][n:])
			ch := m.changed
			m.mu.Unlock()
			for _, e := range evs {
				select {
				case out <- e:
					n++
				case <-ctx.Done():
					return
				}
			}
			if len(evs) > 0 {
				continue
			}
			select {
			case <-ctx.Done():
				return
			case <-ch:
			}
		}
	}()
	return out, nil
}

// Register implements remote.Registry.
func (c *Conn) Register(_ context.Context, w remote.WorkerInfo) error {
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if c.cut {
		return errCut
	}
	m.workers[w.Name], m.seen[w.Name] = w, time.Now()
	return nil
}

// Deregister implements remote.Registry.
func (c *Conn) Deregister(_ context.Context, name string) error {
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if c.cut {
		return errCut
	}
	delete(m.workers, name)
	return nil
}

// List implements remote.Registry.
func (c *Conn) List(context.Context) ([]remote.WorkerInfo, error) {
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if c.cut {
		return nil, errCut
	}
	var ws []remote.WorkerInfo
	for name, w := range m.workers {
		if time.Since(m.seen[name]) <= m.TTL {
			ws = append(ws, w)
		}
	}
	slices.SortFunc(ws, func(a, b remote.WorkerInfo) int { return strings.Compare(a.Name, b.Name) })
	return ws, nil
}

func earlier(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

type delivery struct {
	c       *Conn
	it      *item
	gen     int
	started bool
}

func (d *delivery) Job() remote.Job { return d.it.job }

// check fails when the handle is cut or the delivery went to another.
func (d *delivery) checkLocked() error {
	if d.c.cut {
		return errCut
	}
	if d.it.gen != d.gen || d.it.holder != d.c || d.it.done {
		return fmt.Errorf("remotetest: job %s: delivery expired", d.it.job.ID)
	}
	return nil
}

func (d *delivery) Start(_ context.Context, _ string) (int, error) {
	m := d.c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := d.checkLocked(); err != nil {
		return 0, err
	}
	m.runs[d.it.job.ID]++
	d.started = true
	return m.runs[d.it.job.ID], nil
}

func (d *delivery) InProgress(context.Context) error {
	m := d.c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := d.checkLocked(); err != nil {
		return err
	}
	d.it.deadline = time.Now().Add(m.AckWait)
	return nil
}

func (d *delivery) end(f func()) error {
	m := d.c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := d.checkLocked(); err != nil {
		return err
	}
	f()
	m.kickLocked()
	return nil
}

func (d *delivery) Ack(context.Context) error {
	return d.end(func() { d.it.done = true })
}

func (d *delivery) Term(context.Context) error {
	return d.end(func() { d.it.done = true })
}

func (d *delivery) Nak(_ context.Context, delay time.Duration) error {
	return d.end(func() {
		if d.started {
			d.c.m.runs[d.it.job.ID]--
		}
		d.it.holder, d.it.notBefore = nil, time.Now().Add(delay)
	})
}
