package kit

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/troupe-dev/troupe/budget"
	"github.com/troupe-dev/troupe/budget/claudelog"
	"github.com/troupe-dev/troupe/budget/ledger"
	"github.com/troupe-dev/troupe/internal/dirwatch"
	"github.com/troupe-dev/troupe/internal/termtext"
)

// watchDir calls on, from a goroutine of its own, each time a name of dir
// that match accepts changes, until the returned stop (which waits for a
// call under way). It returns an error when dir cannot be watched.
func watchDir(dir string, match func(string) bool, on func()) (stop func(), err error) {
	w, err := dirwatch.New(dirwatch.Options{})
	if err != nil {
		return nil, err
	}
	kick, unsubscribe, err := w.Subscribe(dir, match)
	if err != nil {
		w.Close()
		return nil, err
	}
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-kick:
				on()
			case <-done:
				return
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
		unsubscribe()
		w.Close()
	}, nil
}

// WatchLedger makes meter look at the session's usage ledger in dir each
// time it changes, so that a pane teammate's spending that reaches a
// limit is seen at once, not at the lead's next model call; the returned
// function stops the watch. Without a watch the meter still looks before
// every call.
func WatchLedger(dir string, meter *budget.Meter) (stop func()) {
	stop, err := watchDir(dir, func(n string) bool { return n == ledger.FileName }, func() {
		_ = meter.Exceeded() // brings the ledger in; a limit reached calls OnExceeded
	})
	if err != nil {
		return func() {}
	}
	return stop
}

// ClaudeMates charges the calls of a lead's Claude Code teammates to its
// session. They spend through their own process, and the only record of
// it is their session transcripts, in <Projects>/<project>/<session>.jsonl
// (the lead gives them the troupe home as CLAUDE_CONFIG_DIR).
type ClaudeMates struct {
	Projects string // <home>/projects
	Cwd      string // the lead's folder: its transcripts are followed live
	Meter    *budget.Meter
	// Led returns the lead's teams, deleted ones too: only calls of their
	// members count (nil: none does).
	Led  func() []string
	Warn func(string) // a transcript that cannot be read; nil: silent
}

// Follow charges each call of a member of the lead's teams under the
// teammate's name, once: as transcripts of the lead's folder are written,
// and whenever read is called (at the end of the run, for all of them:
// teammates in worktrees of their own write elsewhere). stop ends the
// live part.
func (c ClaudeMates) Follow() (read func(), stop func()) {
	f := claudelog.NewFollower(c.Projects)
	var mu sync.Mutex // one read at a time: calls are charged in order, once
	read = func() {
		mu.Lock()
		defer mu.Unlock()
		calls, err := f.Next()
		if err != nil && c.Warn != nil {
			c.Warn(fmt.Sprintf("a Claude Code teammate's transcript: %s", termtext.Clean(err.Error())))
		}
		var led []string
		if c.Led != nil {
			led = c.Led()
		}
		for _, call := range calls {
			if call.Agent == "" || !slices.Contains(led, call.Team) {
				continue // not a teammate of one of this lead's teams
			}
			_ = c.Meter.Add(call.Agent, call.Model, call.Usage) // a limit reached calls the meter's OnExceeded
		}
	}
	dir := filepath.Join(c.Projects, claudelog.ProjectDir(c.Cwd))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return read, func() {}
	}
	stop, err := watchDir(dir, func(string) bool { return true }, read)
	if err != nil {
		return read, func() {}
	}
	return read, stop
}

// NewMeter returns a session's meter on cfg that also records every call
// in the session's usage ledger in dir ("": none, and none when it cannot
// be opened: warn says why) and, with follow, counts what the session's
// other processes (pane teammates) record there before each check of the
// limits. cfg.Record, when set, still hears every call.
func NewMeter(cfg budget.Config, dir string, follow bool, now func() time.Time, warn func(string)) *budget.Meter {
	if warn == nil {
		warn = func(string) {}
	}
	var meter *budget.Meter
	if dir != "" {
		w, err := ledger.Open(dir, now)
		if err != nil {
			warn(fmt.Sprintf("no usage ledger for this session (troupe usage will not see it): %v", err))
		} else {
			also := cfg.Record
			cfg.Record = func(r budget.Record) {
				w.Record(r)
				if also != nil {
					also(r)
				}
			}
			if follow {
				tail := ledger.NewTailer(w.Path())
				cfg.Sync = func() {
					es, err := tail.Next()
					if err != nil {
						warn(fmt.Sprintf("the session's usage ledger: %v", err))
					}
					for _, e := range es {
						if e.Origin != w.Origin() {
							_ = meter.Count(e.Record) // a limit reached shows at the check that follows
						}
					}
				}
			}
		}
	}
	meter = budget.NewMeter(cfg)
	return meter
}
