package task

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Bounds of a monitor (see StartMonitor).
const (
	// DefaultMonitorBatch is the batching window of a monitor: at most one
	// wake of its agent per window.
	DefaultMonitorBatch = 2 * time.Second
	// MinMonitorBatch bounds the window from below: a monitor must not
	// wake its agent more often than this.
	MinMonitorBatch = 100 * time.Millisecond
	// MonitorBatchLines and MonitorBatchBytes bound the lines one wake
	// carries; the rest of the window's matching lines are counted
	// ("+37 more matching lines") and stay in the output file.
	MonitorBatchLines = 20
	MonitorBatchBytes = 2 << 10
	// MonitorLineMax cuts a long line in a wake (the output file keeps
	// it whole, up to monitorSplitMax).
	MonitorLineMax = 300
	// monitorQueue is how many lines wait between a source and its
	// monitor: a chatty source waits for the monitor, never the reverse,
	// so memory stays bounded.
	monitorQueue = 256
	// monitorSplitMax is the longest line a source hands over: a longer
	// one is cut into pieces of this size.
	monitorSplitMax = 16 << 10
)

// Monitor is the detail of a monitor_mcp task: a watch on a source whose
// lines (a shell's output, a growing file, an MCP resource's updates)
// wake the agent that started it.
type Monitor struct {
	// Source is what it watches: "command", "task", "file",
	// "mcp_resource" or "github_pr" (tool/prtool); Target says which (the
	// command, the task id, the path, "server uri", "owner/repo#N").
	Source string
	Target string
	// Server is the MCP server of an mcp_resource monitor.
	Server string
	Filter string // the regular expression lines must match; "" for all
	// AgentID is the agent that started it ("" for the lead);
	// KillForAgent stops it with the agent's shells.
	AgentID string
	// Shell is the local_bash task a command monitor runs its command in.
	Shell ID
	// Seen counts the lines read, Matched those that passed the filter,
	// Wakes the events sent to the agent.
	Seen, Matched int64
	Wakes         int
	LastLine      string // the last matching line, cut to MonitorLineMax
	// Note says how it ended (the command's exit, the file gone); Tail
	// holds the matching lines not yet told when it ended.
	Note string
	Tail string
}

// TaskType implements Detail.
func (*Monitor) TaskType() Type { return MonitorMCP }

// With returns a copy of m changed by f.
func (m *Monitor) With(f func(*Monitor)) *Monitor { c := *m; f(&c); return &c }

// LineSource produces a monitor's lines: it calls emit with each line
// (without its newline) until the source ends, ctx ends, or emit returns
// false (the monitor is stopping). It returns how the source ended: the
// status the monitor ends with when the source ends first (Completed for
// a clean end) and a note for the agent; an error fails the monitor.
type LineSource func(ctx context.Context, emit func(line string) bool) (SourceEnd, error)

// SourceEnd is how a monitor's source ended.
type SourceEnd struct {
	Status Status // Completed or Failed; "" means Completed
	Note   string
}

// MonitorSpec is a monitor to start.
type MonitorSpec struct {
	// ID is the task id; "" gets a fresh one.
	ID          ID
	Description string
	ToolUseID   string
	// Detail describes the source (Source, Target, Server, Filter,
	// AgentID, Shell); the counters are the monitor's own.
	Detail Monitor
	// Filter selects the lines that wake the agent; nil takes them all.
	Filter *regexp.Regexp
	// Batch is the window (default DefaultMonitorBatch, at least
	// MinMonitorBatch).
	Batch time.Duration
	Lines LineSource
	// Stop, when set, is called as the monitor ends, whatever ended it
	// (a command monitor stops its shell).
	Stop func()
}

// ErrBadMonitor is wrapped by the refusals of StartMonitor.
var ErrBadMonitor = errors.New("task: bad monitor")

// StartMonitor starts a monitor_mcp task: the lines spec.Lines produces are
// written to the task's output file (all of them: it keeps everything
// seen), and those that match spec.Filter are batched: at most one
// EventMonitor per window, carrying at most MonitorBatchLines lines
// (MonitorBatchBytes) and the count of the others. Each EventMonitor has a
// <task-notification> for the agent that started the monitor (a running
// task's: no status). When the source ends the monitor ends with it
// (completed, or failed with the source's note) and its notification
// carries the lines not yet told; Stop (TaskStop) ends it silently. The
// registry needs an output dir.
func (r *Registry) StartMonitor(spec MonitorSpec) (State, error) {
	if r.cfg.Dir == "" {
		return State{}, fmt.Errorf("start monitor: %w: registry has no output dir", ErrBadMonitor)
	}
	if spec.Lines == nil {
		return State{}, fmt.Errorf("start monitor: %w: no source", ErrBadMonitor)
	}
	if spec.Batch <= 0 {
		spec.Batch = DefaultMonitorBatch
	}
	spec.Batch = max(spec.Batch, MinMonitorBatch)
	id := spec.ID
	if id == "" {
		id = NewID(MonitorMCP)
	} else if id.TypeOf() != MonitorMCP {
		return State{}, fmt.Errorf("start monitor: %w: id %q is not a monitor_mcp id", ErrBadMonitor, id)
	}
	d := spec.Detail
	d.Seen, d.Matched, d.Wakes, d.LastLine, d.Note, d.Tail = 0, 0, 0, "", "", ""
	if spec.Filter != nil {
		d.Filter = spec.Filter.String()
	}
	path := OutputPath(r.cfg.Dir, id)
	out, err := OpenOutput(path, r.cfg.MaxOutput)
	if err != nil {
		if spec.Stop != nil {
			spec.Stop()
		}
		return State{}, fmt.Errorf("start monitor: %w", err)
	}
	s := State{ID: id, Type: MonitorMCP, Description: spec.Description, ToolUseID: spec.ToolUseID,
		OutputFile: path, Detail: &d}
	st, err := r.Go(s, func(ctx context.Context, id ID) Outcome {
		defer out.Close()
		if spec.Stop != nil {
			defer spec.Stop()
		}
		return r.runMonitor(ctx, id, spec, out)
	})
	if err != nil {
		out.Close()
		if spec.Stop != nil {
			spec.Stop()
		}
		return st, fmt.Errorf("start monitor: %w", err)
	}
	return st, nil
}

// runMonitor is a monitor's loop: it takes the source's lines, keeps them
// in out, batches the matching ones and tells the agent once per window.
func (r *Registry) runMonitor(ctx context.Context, id ID, spec MonitorSpec, out *Output) Outcome {
	sctx, cancel := context.WithCancel(ctx)
	lines := make(chan string, monitorQueue)
	type result struct {
		end SourceEnd
		err error
	}
	done := make(chan result, 1)
	go func() {
		end, err := spec.Lines(sctx, func(l string) bool {
			select {
			case lines <- l:
				return true
			case <-sctx.Done():
				return false
			}
		})
		done <- result{end, err}
	}()
	defer func() { cancel(); <-done }()
	tick := r.clock.NewTicker(spec.Batch)
	defer tick.Stop()
	var b monitorBatch
	var seen int64
	take := func(l string) {
		seen++
		out.Write([]byte(l + "\n")) // a full disk loses the copy, not the event
		if spec.Filter == nil || spec.Filter.MatchString(l) {
			b.add(l)
		}
	}
	for {
		select {
		case l := <-lines:
			take(l)
		case <-tick.C():
			r.tellMonitor(id, &b, seen)
		case res := <-done:
			done <- res // for the deferred wait
			for more := true; more; {
				select {
				case l := <-lines:
					take(l)
				default:
					more = false
				}
			}
			to, note := res.end.Status, res.end.Note
			if to == "" {
				to = Completed
			}
			if res.err != nil {
				to, note = Failed, res.err.Error()
			}
			tail, matched := b.text(), b.total
			return Outcome{Status: to, Record: func(s State) State {
				if m, ok := s.Detail.(*Monitor); ok {
					s.Detail = m.With(func(c *Monitor) {
						c.Seen, c.Matched, c.Note, c.Tail = seen, c.Matched+int64(matched), note, tail
						if b.last != "" {
							c.LastLine = b.last
						}
					})
				}
				return s
			}}
		case <-ctx.Done():
			return Outcome{Status: Killed}
		}
	}
}

// tellMonitor sends the batch of task id as one EventMonitor, if it holds
// any line and the task still runs, and empties it.
func (r *Registry) tellMonitor(id ID, b *monitorBatch, seen int64) {
	if b.total == 0 {
		r.mu.Lock()
		if s, ok := r.tasks[id]; ok {
			if m, ok := s.Detail.(*Monitor); ok && m.Seen != seen && s.Status == Running {
				s.Detail = m.With(func(c *Monitor) { c.Seen = seen })
				r.tasks[id] = s // counters only: no event, no wake
			}
		}
		r.mu.Unlock()
		return
	}
	text, n, last := b.text(), b.total, b.last
	*b = monitorBatch{}
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.tasks[id]
	m, isMon := s.Detail.(*Monitor)
	if !ok || !isMon || s.Status != Running {
		return
	}
	s.Detail = m.With(func(c *Monitor) {
		c.Seen, c.Matched, c.Wakes, c.LastLine = seen, c.Matched+int64(n), c.Wakes+1, last
	})
	r.tasks[id] = s
	what := "line"
	if n != 1 {
		what = "lines"
	}
	if m.Filter != "" {
		what = "matching " + what
	}
	n1 := Notification{TaskID: s.ID, ToolUseID: s.ToolUseID, Type: s.Type, OutputFile: s.OutputFile,
		Summary:    fmt.Sprintf("Monitor %q: %d new %s", s.Description, n, what),
		OutputTail: text,
		Note:       "The monitor is still running; it tells you again when more comes. TaskStop ends it."}
	r.emitLocked(Event{Kind: EventMonitor, State: s, Summary: n1.Summary, Notification: n1.XML()})
}

// monitorBatch is the matching lines of one window: the first ones, within
// MonitorBatchLines and MonitorBatchBytes, and the count of all.
type monitorBatch struct {
	lines []string
	bytes int
	total int
	last  string
}

func (b *monitorBatch) add(l string) {
	l = clipLine(l, MonitorLineMax)
	b.total++
	b.last = l
	if len(b.lines) < MonitorBatchLines && b.bytes+len(l)+1 <= MonitorBatchBytes {
		b.lines = append(b.lines, l)
		b.bytes += len(l) + 1
	}
}

// text is the batch for the model: its lines and "+N more matching lines".
func (b *monitorBatch) text() string {
	if b.total == 0 {
		return ""
	}
	t := strings.Join(b.lines, "\n")
	if more := b.total - len(b.lines); more > 0 {
		w := "lines"
		if more == 1 {
			w = "line"
		}
		t += fmt.Sprintf("\n+%d more matching %s (in the output file)", more, w)
	}
	return t
}

// clipLine cuts l to at most n bytes, at a rune start, marking the cut.
func clipLine(l string, n int) string {
	l = strings.ToValidUTF8(strings.ReplaceAll(l, "\x00", ""), "\uFFFD")
	if len(l) <= n {
		return l
	}
	i := n
	for i > 0 && l[i]&0xC0 == 0x80 {
		i--
	}
	return l[:i] + "…"
}

// MonitorSummary is the one-line outcome of a terminal monitor.
func monitorSummary(s State, m *Monitor) string {
	base := fmt.Sprintf("Monitor %q", s.Description)
	switch s.Status {
	case Completed:
		base += " ended"
	case Failed:
		base += " failed"
	case Killed:
		return base + " was stopped"
	}
	if m.Note != "" {
		base += ": " + m.Note
	}
	return base
}
