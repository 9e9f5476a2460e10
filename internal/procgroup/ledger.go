package procgroup

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A Ledger is the record, in one file, of the process groups one troupe
// process started and has not yet seen end: Bash calls, background
// shells, monitors, MCP servers and hooks, of every agent the process
// runs. When the process ends cleanly Close kills what is left and removes
// the file; when it dies (SIGKILL, a crash, a closed pane) the file stays,
// and Reap, run by whoever looks next (the lead when a teammate dies or
// when it resumes, `troupe team delete --force`), kills the groups before
// the dead owner's tasks are released.
//
// A Ledger's file is written by its process only; readers are other
// processes that found its owner gone. A Ledger is safe for concurrent
// use.
type Ledger struct {
	path  string
	owner Owner

	mu     sync.Mutex
	groups map[int]uint64 // pgid -> its leader's start time; guarded by mu
	closed bool           // guarded by mu
}

// Owner is the process a ledger belongs to.
type Owner struct {
	PID int `json:"pid"`
	// Start is the process's start time in clock ticks since boot
	// (/proc/<pid>/stat field 22), 0 where there is no /proc: with the pid
	// it tells the owner from a later process given the same pid.
	Start uint64 `json:"start"`
	// Agent is the agent id the process runs as (name@team), "" for a
	// lead; Session is its session id.
	Agent   string `json:"agent,omitempty"`
	Session string `json:"session,omitempty"`
}

// file is a ledger's JSON.
type file struct {
	Owner  Owner   `json:"owner"`
	Groups []group `json:"groups"`
}

type group struct {
	PGID  int    `json:"pgid"`
	Start uint64 `json:"start"` // of the group's leader, 0 unknown
}

// Ext is the name ending of ledger files.
const Ext = ".pgids"

// Open starts the ledger of this process in dir (made if missing), as
// agent (name@team, "" for a lead) of session.
func Open(dir, agent, session string) (*Ledger, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("process ledger: %w", err)
	}
	pid := os.Getpid()
	l := &Ledger{path: filepath.Join(dir, strconv.Itoa(pid)+Ext), groups: map[int]uint64{},
		owner: Owner{PID: pid, Start: startTime(pid), Agent: agent, Session: session}}
	if err := l.writeLocked(); err != nil {
		return nil, err
	}
	return l, nil
}

// Path returns the ledger's file.
func (l *Ledger) Path() string { return l.path }

// Add records group pgid, just started by this process. A failed write is
// returned; the group is still remembered, for Close.
func (l *Ledger) Add(pgid int) error {
	if l == nil || pgid <= 0 {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.groups[pgid] = startTime(pgid)
	return l.writeLocked()
}

// Remove forgets group pgid, once nothing of it runs.
func (l *Ledger) Remove(pgid int) error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.groups[pgid]; !ok || l.closed {
		return nil
	}
	delete(l.groups, pgid)
	return l.writeLocked()
}

// Close kills the groups still recorded (nothing outlives its owner) and
// removes the file. Later Adds are ignored.
func (l *Ledger) Close() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	for pgid, start := range l.groups {
		killGroup(pgid, start)
	}
	if err := os.Remove(l.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove process ledger: %w", err)
	}
	return nil
}

func (l *Ledger) writeLocked() error {
	f := file{Owner: l.owner, Groups: []group{}}
	for pgid, start := range l.groups {
		f.Groups = append(f.Groups, group{PGID: pgid, Start: start})
	}
	slices.SortFunc(f.Groups, func(a, b group) int { return a.PGID - b.PGID })
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	// Replaced whole (temp file, then rename), so a reader never sees a
	// torn ledger; not synced: a machine that crashes ends the groups too.
	tmp, err := os.CreateTemp(filepath.Dir(l.path), ".ledger-*")
	if err != nil {
		return fmt.Errorf("process ledger: %w", err)
	}
	_, err = tmp.Write(b)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), l.path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("process ledger: %w", err)
	}
	return nil
}

// Reaped is what Reap did for one dead owner.
type Reaped struct {
	Owner  Owner
	Groups int // groups signalled (some may have been empty already)
}

// ReapOptions selects what Reap looks at.
type ReapOptions struct {
	// Match selects ledgers by owner; nil selects all.
	Match func(Owner) bool
	// Wait is how long Reap waits for a selected owner that still runs
	// to end (a teammate whose pane was just closed); 0 skips live owners
	// at once.
	Wait time.Duration
	// Kill sends SIGKILL to a selected owner still running after Wait
	// (a teammate that must go: its team is being deleted).
	Kill bool
}

// Reap kills the process groups recorded in the ledgers of dir whose
// owner is gone (or, with Kill, made gone), and removes those ledgers. A
// group whose leader's pid now belongs to a later process is left alone.
// A ledger that cannot be read is removed when its owner, read from its
// name, is gone; the error says so.
func Reap(dir string, o ReapOptions) ([]Reaped, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reap process groups: %w", err)
	}
	var (
		out  []Reaped
		errs []error
	)
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, Ext) {
			continue
		}
		path := filepath.Join(dir, name)
		b, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue // its owner closed it meanwhile
		}
		var f file
		if err == nil {
			err = json.Unmarshal(b, &f)
		}
		if err == nil && f.Owner.PID <= 0 {
			err = errors.New("no owner pid")
		}
		if err != nil {
			pid, perr := strconv.Atoi(strings.TrimSuffix(name, Ext))
			if perr == nil && pid > 0 && !running(pid, 0) {
				_ = os.Remove(path)
				errs = append(errs, fmt.Errorf("process ledger %s of a process gone: %v (removed; its groups are unknown)", path, err))
			}
			continue
		}
		if o.Match != nil && !o.Match(f.Owner) {
			continue
		}
		if running(f.Owner.PID, f.Owner.Start) && !waitGone(f.Owner, o.Wait, o.Kill) {
			continue
		}
		for _, g := range f.Groups {
			killGroup(g.PGID, g.Start)
		}
		waitGroups(f.Groups)
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove process ledger %s: %w", path, err))
		}
		out = append(out, Reaped{Owner: f.Owner, Groups: len(f.Groups)})
	}
	return out, errors.Join(errs...)
}

// waitGone waits up to wait for owner to end, then, with kill, kills it
// and waits a little more; it reports whether the owner is gone.
func waitGone(owner Owner, wait time.Duration, kill bool) bool {
	gone := func(within time.Duration) bool {
		for deadline := time.Now().Add(within); ; time.Sleep(10 * time.Millisecond) {
			if !running(owner.PID, owner.Start) {
				return true
			}
			if !time.Now().Before(deadline) {
				return false
			}
		}
	}
	if gone(wait) {
		return true
	}
	if !kill {
		return false
	}
	killProcess(owner.PID)
	return gone(5 * time.Second)
}

// killWait bounds how long Reap waits for the groups it killed to end (a
// SIGKILL takes the kernel a moment), so that a task released after it
// cannot be claimed while its old command still runs.
const killWait = 2 * time.Second

// waitGroups waits up to killWait for gs to have no live process.
func waitGroups(gs []group) {
	deadline := time.Now().Add(killWait)
	for _, g := range gs {
		for groupLive(g.PGID) && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// Running returns the owners of the ledgers in dir whose process still
// runs (a ledger that cannot be read is skipped).
func Running(dir string) []Owner {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []Owner
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), Ext) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		var f file
		if json.Unmarshal(b, &f) == nil && running(f.Owner.PID, f.Owner.Start) {
			out = append(out, f.Owner)
		}
	}
	return out
}

// Runs reports whether o's process still runs.
func (o Owner) Runs() bool { return running(o.PID, o.Start) }

// ProcessOf returns pid as an Owner, with its start time, so that Runs
// later tells it from a process given the same pid.
func ProcessOf(pid int) Owner { return Owner{PID: pid, Start: startTime(pid)} }
