package dashboard

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/team"
)

// events streams a team's page fragment as Server-Sent Events: one "state"
// event with the current state at once (a new tab catches up), then one
// after every change the stores' watches (and Config.WatchWorkflows)
// report, never on a timer. Kicks coalesce; an unchanged fragment is not
// sent again.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	name := r.PathValue("team")
	cfg, err := s.cfg.Teams.Get(ctx, name)
	if err != nil {
		s.fail(w, err)
		return
	}
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)

	ctx, cancel := context.WithCancel(ctx)
	f := &follow{kick: make(chan struct{}, 1), inboxes: map[string]context.CancelFunc{}}
	defer func() {
		cancel()
		f.wg.Wait()
	}()
	var missing []string
	if tw, ok := s.cfg.Teams.(team.Watcher); ok {
		if err := f.watch(ctx, func(ctx context.Context) (<-chan struct{}, error) { return tw.Watch(ctx, cfg.Name) }); err != nil {
			missing = append(missing, "roster: "+err.Error())
		}
	} else {
		missing = append(missing, "this store cannot watch teams: roster changes show on reload")
	}
	if lw, ok := s.cfg.Tasks.(tasklist.Watcher); ok {
		if err := f.watch(ctx, func(ctx context.Context) (<-chan struct{}, error) { return lw.Watch(ctx, cfg.Name) }); err != nil {
			missing = append(missing, "tasks: "+err.Error())
		}
	} else {
		missing = append(missing, "this store cannot watch task lists: task changes show on reload")
	}
	if s.cfg.Workflows != nil && s.cfg.WatchWorkflows != nil && cfg.LeadSessionID != "" { // workflows.go
		session := cfg.LeadSessionID
		if err := f.watch(ctx, func(ctx context.Context) (<-chan struct{}, error) { return s.cfg.WatchWorkflows(ctx, session) }); err != nil {
			missing = append(missing, "workflow runs: "+err.Error())
		}
	}

	var last []byte
	for {
		// A client that stops reading is let go once a write has waited
		// WriteTimeout, with the watches this stream holds.
		_ = rc.SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout))
		v, err := s.load(ctx, cfg.Name)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			writeEvent(w, "problem", []byte(err.Error()))
		} else {
			for _, m := range missing {
				v.Problems = append(v.Problems, m)
			}
			for _, m := range f.sync(ctx, s, cfg.Name, v.Members) {
				v.Problems = append(v.Problems, m)
			}
			var buf bytes.Buffer
			if err := s.pages.ExecuteTemplate(&buf, "live", v); err != nil {
				writeEvent(w, "problem", []byte("render: "+err.Error()))
			} else if !bytes.Equal(buf.Bytes(), last) {
				last = buf.Bytes()
				writeEvent(w, "state", last)
			}
		}
		if err := rc.Flush(); err != nil {
			return
		}
		if !s.wait(ctx, w, rc, f.kick) {
			return
		}
	}
}

// wait blocks until a kick, writing heartbeats meanwhile; it reports false
// when the client is gone.
func (s *Server) wait(ctx context.Context, w http.ResponseWriter, rc *http.ResponseController, kick <-chan struct{}) bool {
	beat := time.NewTicker(s.cfg.Heartbeat)
	defer beat.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-kick:
			return true
		case <-beat.C:
			_ = rc.SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout))
			if _, err := fmt.Fprint(w, ": heartbeat\n\n"); err != nil {
				return false
			}
			if err := rc.Flush(); err != nil {
				return false
			}
		}
	}
}

// writeEvent writes one event; every line of data gets its own "data:"
// field, as the SSE format requires. A line ends at "\r\n", "\n" or a
// lone "\r", as it does for the browser: text that held a lone "\r" would
// otherwise start a field of its own (an event name, an id, a retry).
func writeEvent(w http.ResponseWriter, event string, data []byte) {
	var b bytes.Buffer
	b.WriteString("event: " + event + "\n")
	lines := strings.Split(strings.ReplaceAll(strings.ReplaceAll(string(data), "\r\n", "\n"), "\r", "\n"), "\n")
	for _, line := range lines {
		b.WriteString("data: ")
		b.WriteString(line)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	_, _ = w.Write(b.Bytes())
}

// follow fans the stores' watches of one event stream into one coalescing
// kick channel. Its goroutines end with the stream's context.
type follow struct {
	kick chan struct{}
	wg   sync.WaitGroup

	// inboxes holds the cancel of each member's inbox watch; only the
	// stream's goroutine touches it.
	inboxes map[string]context.CancelFunc
}

// watch starts one watch and forwards its kicks.
func (f *follow) watch(ctx context.Context, open func(context.Context) (<-chan struct{}, error)) error {
	ch, err := open(ctx)
	if err != nil {
		return err
	}
	f.wg.Go(func() {
		for range ch {
			select {
			case f.kick <- struct{}{}:
			default:
			}
		}
	})
	return nil
}

// sync watches the inbox of every current member and stops watching those
// that left; it returns a line per watch that could not start.
func (f *follow) sync(ctx context.Context, s *Server, teamName string, members []memberView) []string {
	var problems []string
	now := map[string]bool{}
	for _, m := range members {
		now[m.Name] = true
		if _, ok := f.inboxes[m.Name]; ok {
			continue
		}
		wctx, cancel := context.WithCancel(ctx)
		name := m.Name
		if err := f.watch(wctx, func(ctx context.Context) (<-chan struct{}, error) { return s.cfg.Mail.Watch(ctx, teamName, name) }); err != nil {
			cancel()
			problems = append(problems, fmt.Sprintf("inbox of %s cannot be watched: %v", name, err))
			continue
		}
		f.inboxes[name] = cancel
	}
	for name, cancel := range f.inboxes {
		if !now[name] {
			cancel()
			delete(f.inboxes, name)
		}
	}
	return problems
}
