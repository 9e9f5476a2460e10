package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// event is one thing a child reported: a record, a Node IPC message, or
// the end of its output.
type event struct {
	from *child
	rec  record
	raw  []byte // a Node IPC message other than "ready"
	eof  bool
	err  error // a line that could not be decoded
}

// child is one started process of a group.
type child struct {
	name  string
	index int
	proc  Process
	cmd   *os.File // our end of its command channel: its stdin, or the IPC socket
	node  bool     // speaks Node's IPC (JSON values) instead of records

	ready    bool
	finished bool // it reported that its work is done
	done     bool // its output ended
	state    *os.ProcessState

	logMu sync.Mutex
	log   tail // its stderr (and stdout when that is not the channel); guarded by logMu
	// logDone is closed once the log's pipe reached EOF.
	logDone chan struct{}
}

// send writes one command line to the child.
func (c *child) send(line string) error {
	if _, err := io.WriteString(c.cmd, line+"\n"); err != nil {
		return fmt.Errorf("command %s: %w", c.name, err)
	}
	return nil
}

// goLine sends the barrier's "go".
func (c *child) goLine() error {
	if c.node {
		return c.send(`"go"`)
	}
	return c.send(`{"go":true}`)
}

func (c *child) logTail() string {
	c.logMu.Lock()
	defer c.logMu.Unlock()
	return strings.TrimSpace(c.log.String())
}

// tail keeps the last 4 KiB written to it.
type tail struct{ b []byte }

func (t *tail) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if over := len(t.b) - 4096; over > 0 {
		t.b = t.b[over:]
	}
	return len(p), nil
}

func (t *tail) String() string { return string(t.b) }

// group is a set of children started for one run. Its goroutines (two per
// child) end when the children's output ends; finish and abort wait for
// them.
type group struct {
	r      *Runner
	events chan event
	kids   []*child
	wg     sync.WaitGroup
	quit   chan struct{} // closed by abort: readers stop delivering
	ended  bool
}

func (r *Runner) newGroup() *group {
	return &group{r: r, events: make(chan event, 4096), quit: make(chan struct{})}
}

// spawnTroupe starts Exe in child mode with cfg.
func (g *group) spawnTroupe(ctx context.Context, name string, cfg childConfig) (*child, error) {
	if g.r.ProfileDir != "" {
		g.r.profiles++
		cfg.Profile = filepath.Join(g.r.ProfileDir, fmt.Sprintf("%s-%d-%s.pprof", cfg.Role, g.r.profiles, strings.ReplaceAll(name, " ", "-")))
	}
	arg, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	spec := Spec{
		Path: g.r.Exe,
		Args: append(append([]string(nil), g.r.ChildArgs...), string(arg)),
		Env:  g.r.ChildEnv,
		Dir:  cfg.Dir,
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, err
	}
	spec.Stdin, spec.Stdout, spec.Stderr = inR, outW, errW
	proc, err := g.r.Start(ctx, spec)
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	c := &child{name: name, index: len(g.kids), proc: proc, cmd: inW}
	g.kids = append(g.kids, c)
	g.read(c, outR, decodeRecord)
	g.drain(c, errR)
	return c, nil
}

// read delivers what c writes on r as events, then an EOF event.
func (g *group) read(c *child, r *os.File, decode func([]byte) event) {
	g.wg.Go(func() {
		defer r.Close()
		br := bufio.NewReaderSize(r, 64<<10)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				ev := decode(line)
				ev.from = c
				if !g.deliver(ev) {
					return
				}
			}
			if err != nil {
				g.deliver(event{from: c, eof: true})
				return
			}
		}
	})
}

func (g *group) deliver(ev event) bool {
	select {
	case g.events <- ev:
		return true
	case <-g.quit:
		return false
	}
}

// drain copies r into c's log until EOF.
func (g *group) drain(c *child, r *os.File) {
	c.logDone = make(chan struct{})
	g.wg.Go(func() {
		defer close(c.logDone)
		defer r.Close()
		buf := make([]byte, 4096)
		for {
			n, err := r.Read(buf)
			if n > 0 {
				c.logMu.Lock()
				c.log.Write(buf[:n])
				c.logMu.Unlock()
			}
			if err != nil {
				return
			}
		}
	})
}

func decodeRecord(line []byte) event {
	var rec record
	if err := json.Unmarshal(line, &rec); err != nil {
		return event{err: fmt.Errorf("undecodable line %q: %w", abbrev(string(line)), err)}
	}
	return event{rec: rec}
}

func abbrev(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 120 {
		return s[:120] + "..."
	}
	return s
}

// next returns the next event of any child.
func (g *group) next(ctx context.Context) (event, error) {
	select {
	case ev := <-g.events:
		if ev.eof {
			ev.from.done = true
		}
		return ev, nil
	case <-ctx.Done():
		return event{}, context.Cause(ctx)
	}
}

// died describes a child whose output ended before it was done.
func died(c *child) error {
	// Its stdout ended; let its stderr reach EOF too, so that the message
	// it printed on the way out is in the log (bounded: a grandchild may
	// still hold the pipe).
	if c.logDone != nil {
		select {
		case <-c.logDone:
		case <-time.After(2 * time.Second):
		}
	}
	msg := fmt.Sprintf("%s exited early", c.name)
	if t := c.logTail(); t != "" {
		msg += ": " + lastLines(t, 8)
	}
	return errors.New(msg)
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// waitReady waits until every child reported ready. Other events are an
// error: nothing runs before the barrier.
func (g *group) waitReady(ctx context.Context) error {
	waiting := len(g.kids)
	for _, c := range g.kids {
		if c.ready {
			waiting--
		}
	}
	for waiting > 0 {
		ev, err := g.next(ctx)
		if err != nil {
			return err
		}
		switch {
		case ev.eof:
			return died(ev.from)
		case ev.err != nil:
			return fmt.Errorf("%s: %w", ev.from.name, ev.err)
		case ev.rec.Kind == kindReady:
			if !ev.from.ready {
				ev.from.ready = true
				waiting--
			}
		default:
			return fmt.Errorf("%s: %q before the barrier", ev.from.name, ev.rec.Kind)
		}
	}
	return nil
}

// release passes the barrier: it sends "go" to every child and returns the
// time just before the first one.
func (g *group) release(kids []*child) (int64, error) {
	start := time.Now().UnixNano()
	for _, c := range kids {
		if err := c.goLine(); err != nil {
			return start, err
		}
	}
	return start, nil
}

// finish closes the command channels, reads what the children still
// write (ignoring it: callers read what they need first), waits for every
// child to exit and for the group's goroutines, and reports the first child
// that failed.
func (g *group) finish(ctx context.Context) error {
	if g.ended {
		return nil
	}
	for _, c := range g.kids {
		if !c.node { // a Node child's channel is closed by its reader
			c.cmd.Close()
		}
	}
	for g.running() > 0 {
		if _, err := g.next(ctx); err != nil {
			g.abort()
			return err
		}
	}
	g.ended = true
	var first error
	for _, c := range g.kids {
		st, err := c.proc.Wait()
		c.state = st
		if err != nil && first == nil {
			first = fmt.Errorf("%s: %v: %s", c.name, err, lastLines(c.logTail(), 8))
		}
	}
	close(g.quit)
	g.wg.Wait()
	return first
}

// running returns the number of children whose output has not ended.
func (g *group) running() int {
	n := 0
	for _, c := range g.kids {
		if !c.done {
			n++
		}
	}
	return n
}

// abort kills every child and waits for them and the group's goroutines.
func (g *group) abort() {
	if g.ended {
		return
	}
	g.ended = true
	close(g.quit)
	for _, c := range g.kids {
		c.proc.Kill()
		c.cmd.Close()
	}
	for _, c := range g.kids {
		c.state, _ = c.proc.Wait()
	}
	g.wg.Wait()
}

// cpuMS returns the user plus system CPU time of the children that exited.
func cpuMS(kids []*child) float64 {
	var d time.Duration
	for _, c := range kids {
		if c.state != nil {
			d += c.state.UserTime() + c.state.SystemTime()
		}
	}
	return ms(d)
}

// collect passes every event to handle until every child's output ended,
// calling progress on every tick. A child whose output ends before it
// reported done, or that writes an undecodable line, is an error.
func (g *group) collect(ctx context.Context, progress func(), handle func(event) error) error {
	return g.collectUntil(ctx, func() bool { return g.running() == 0 }, progress, handle)
}

// collectUntil is collect, ending as soon as stop reports true.
func (g *group) collectUntil(ctx context.Context, stop func() bool, progress func(), handle func(event) error) error {
	t := g.r.tick()
	defer t.Stop()
	for !stop() {
		select {
		case ev := <-g.events:
			switch {
			case ev.eof:
				ev.from.done = true
				if !ev.from.finished {
					return died(ev.from)
				}
				continue
			case ev.err != nil:
				return fmt.Errorf("%s: %w", ev.from.name, ev.err)
			case ev.raw != nil || ev.rec.Kind == kindDone:
				ev.from.finished = true
			}
			if err := handle(ev); err != nil {
				return err
			}
		case <-t.C:
			if progress != nil {
				progress()
			}
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	return nil
}
