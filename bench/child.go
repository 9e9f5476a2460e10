package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime/pprof"
	"strings"
	"sync"
	"time"

	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/tasklist"
)

// Child roles.
const (
	roleSend  = "send"  // send N messages after "go", with optional gaps
	roleWatch = "watch" // report when each message is first seen, until stdin ends
	roleClaim = "claim" // one ClaimTask per {"go":true,"list":L,"id":I} line
	roleDrain = "drain" // after "go", Claim and complete until no task is ready
	roleHost  = "host"  // after "go", run Agents as in-process teammates (host.go)
)

// childConfig tells a child what to do. The runner passes it, as JSON, in
// the child's last argument.
type childConfig struct {
	Role string `json:"role"`
	// Root is the file store's root; or NATS and Namespace locate the
	// NATS store.
	Root      string        `json:"root,omitempty"`
	NATS      string        `json:"nats,omitempty"`
	Namespace string        `json:"namespace,omitempty"`
	Team      string        `json:"team,omitempty"`
	To        string        `json:"to,omitempty"`
	From      string        `json:"from,omitempty"` // sender, also the id prefix
	N         int           `json:"n,omitempty"`
	Text      int           `json:"text,omitempty"`
	GapMin    time.Duration `json:"gap_min,omitempty"`
	GapMax    time.Duration `json:"gap_max,omitempty"`
	List      string        `json:"list,omitempty"`
	Agent     string        `json:"agent,omitempty"`
	// Agents are a host's teammates; Targets, the teammates its pings
	// go to; Host numbers it; Idle is its idle window.
	Agents  []string      `json:"agents,omitempty"`
	Targets []string      `json:"targets,omitempty"`
	Host    int           `json:"host,omitempty"`
	Idle    time.Duration `json:"idle,omitempty"`
	// Dir is the child's working folder ("": the runner's).
	Dir string `json:"dir,omitempty"`
	// Profile, if set, is a file to write the child's CPU profile to.
	Profile string `json:"profile,omitempty"`
}

// Record kinds, children to runner.
const (
	kindReady = "ready"
	kindOp    = "op"   // one operation: a send, a claim, an update
	kindSeen  = "seen" // the watcher saw a message
	kindDone  = "done" // the child finished its work
)

// Outcomes of an operation.
const (
	outOK          = "ok"           // a send or update succeeded
	outWon         = "won"          // a claim succeeded
	outClaimed     = "claimed"      // the task was owned by someone else
	outNotFound    = "not-found"    // the task did not exist
	outNoneReady   = "none-ready"   // Claim found no claimable task
	outLockTimeout = "lock-timeout" // the inbox lock was not taken in time
	outPending     = "pending"      // the send gave up while a holder had claimed it
	outUpdateError = "update-error" // completing a claimed task failed
	outOther       = "other"
)

// command is one line on a child's stdin.
type command struct {
	Go    bool   `json:"go"`
	Phase string `json:"phase,omitempty"` // a host's next phase
	Round int    `json:"round,omitempty"` // which round of pings
	List  string `json:"list,omitempty"`
	ID    string `json:"id,omitempty"`
}

// record is one line on a child's stdout.
type record struct {
	Kind    string `json:"k"`
	ID      string `json:"id,omitempty"` // message or task id
	Start   int64  `json:"s,omitempty"`  // Unix ns: operation started, or message seen
	End     int64  `json:"e,omitempty"`  // Unix ns: operation returned
	Outcome string `json:"o,omitempty"`
	Err     string `json:"err,omitempty"`
	Reads   int    `json:"reads,omitempty"`
	Kicks   int    `json:"kicks,omitempty"`
	Wasted  int    `json:"wasted,omitempty"` // lost compare-and-swaps inside Claim
	Busy    int    `json:"busy,omitempty"`   // tasks Claim passed over while another wrote them
	Write   int64  `json:"w,omitempty"`      // ns: the claim's own successful write
	RSS     int64  `json:"rss,omitempty"`    // a host's resident bytes
	PerIdle int64  `json:"per_idle,omitempty"`
	CPU     int64  `json:"cpu,omitempty"` // a host's CPU ns over its idle window
}

// RunChild runs one benchmark child: config is the JSON its runner put in
// its last argument. It takes commands from stdin and writes records to
// stdout, one JSON line each. It returns when its work is done or stdin
// ends.
func RunChild(ctx context.Context, config string, stdin io.Reader, stdout io.Writer) error {
	return Child{}.Run(ctx, config, stdin, stdout)
}

// Run is RunChild with the team host's teammate runtime.
func (k Child) Run(ctx context.Context, config string, stdin io.Reader, stdout io.Writer) error {
	var c childConfig
	if err := json.Unmarshal([]byte(config), &c); err != nil {
		return fmt.Errorf("bench child: bad configuration: %w", err)
	}
	if c.Profile != "" {
		f, err := os.Create(c.Profile)
		if err != nil {
			return fmt.Errorf("bench child: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("bench child: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	s, err := openChild(ctx, c)
	if err != nil {
		return fmt.Errorf("bench child: %w", err)
	}
	defer s.close()
	ch := &childIO{in: bufio.NewReader(stdin), enc: json.NewEncoder(stdout), teammate: k.Teammate}
	switch c.Role {
	case roleSend:
		return ch.send(ctx, s, c)
	case roleWatch:
		return ch.watch(ctx, s, c)
	case roleClaim:
		return ch.claim(ctx, s, c)
	case roleDrain:
		return ch.drain(ctx, s, c)
	case roleHost:
		return ch.host(ctx, s, c)
	}
	return fmt.Errorf("bench child: unknown role %q", c.Role)
}

// childIO is a child's side of the protocol.
type childIO struct {
	in       *bufio.Reader
	teammate Teammate // the team host's runtime

	mu  sync.Mutex
	enc *json.Encoder // guarded by mu
}

func (ch *childIO) emit(r record) error {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if err := ch.enc.Encode(r); err != nil {
		return fmt.Errorf("bench child: report: %w", err)
	}
	return nil
}

// next reads the next command; io.EOF when stdin ended.
func (ch *childIO) next() (command, error) {
	line, err := ch.in.ReadString('\n')
	if strings.TrimSpace(line) == "" {
		if err == nil {
			return ch.next()
		}
		return command{}, err
	}
	var c command
	if err := json.Unmarshal([]byte(line), &c); err != nil {
		return command{}, fmt.Errorf("bench child: bad command %q: %w", abbrev(line), err)
	}
	return c, nil
}

// barrier reports ready and waits for "go".
func (ch *childIO) barrier() error {
	if err := ch.emit(record{Kind: kindReady}); err != nil {
		return err
	}
	c, err := ch.next()
	if err != nil {
		return fmt.Errorf("bench child: waiting for go: %w", err)
	}
	if !c.Go {
		return errors.New("bench child: want a go command")
	}
	return nil
}

func (ch *childIO) send(ctx context.Context, s stores, c childConfig) error {
	mail := s.mail
	if err := ch.barrier(); err != nil {
		return err
	}
	for i := range c.N {
		id := fmt.Sprintf("%s-m%d", c.From, i)
		msg := mailbox.Message{
			From: c.From, Text: Filler("<"+id+">", c.Text), Summary: "msg " + id,
			Color: "blue", Timestamp: time.Now(),
		}
		start := time.Now()
		_, err := mail.Send(ctx, c.Team, c.To, msg)
		end := time.Now()
		if err := ch.emit(record{Kind: kindOp, ID: id, Start: start.UnixNano(), End: end.UnixNano(), Outcome: sendOutcome(err), Err: errString(err)}); err != nil {
			return err
		}
		if c.GapMax > 0 && i < c.N-1 {
			gap := c.GapMin + rand.N(c.GapMax-c.GapMin+1)
			if err := sleep(ctx, gap); err != nil {
				return err
			}
		}
	}
	return ch.emit(record{Kind: kindDone})
}

func sendOutcome(err error) string {
	switch {
	case err == nil:
		return outOK
	case strings.Contains(err.Error(), "delivery pending"):
		return outPending
	case strings.Contains(err.Error(), "not taken within"):
		return outLockTimeout
	}
	return outOther
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// watch reports each message id of the inbox the first time a Read shows
// it, re-reading on every Watch kick, until stdin ends.
func (ch *childIO) watch(ctx context.Context, s stores, c childConfig) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	mail := s.mail
	kick, err := mail.Watch(ctx, c.Team, c.Agent)
	if err != nil {
		return fmt.Errorf("bench child: %w", err)
	}
	seen := map[string]bool{}
	var reads, kicks int
	check := func() error {
		reads++
		msgs, err := mail.Read(ctx, c.Team, c.Agent, true)
		now := time.Now().UnixNano()
		if err != nil {
			return ch.emit(record{Kind: kindOp, Outcome: outOther, Err: err.Error()})
		}
		for _, m := range msgs {
			id, ok := TextID(m.Text)
			if !ok || seen[id] {
				continue
			}
			seen[id] = true
			if err := ch.emit(record{Kind: kindSeen, ID: id, Start: now}); err != nil {
				return err
			}
		}
		return nil
	}
	if err := check(); err != nil {
		return err
	}
	// The runner stops a watcher by closing its stdin. The goroutine ends
	// then; on an early error return it ends with the process.
	stop := make(chan struct{})
	go func() {
		defer close(stop)
		io.Copy(io.Discard, ch.in)
	}()
	if err := ch.emit(record{Kind: kindReady}); err != nil {
		return err
	}
	for {
		select {
		case _, ok := <-kick:
			if !ok {
				return errors.New("bench child: watch ended")
			}
			kicks++
			if err := check(); err != nil {
				return err
			}
		case <-stop:
			return ch.emit(record{Kind: kindDone, Reads: reads, Kicks: kicks})
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// claim runs one ClaimTask per command until stdin ends.
func (ch *childIO) claim(ctx context.Context, s stores, c childConfig) error {
	if err := ch.emit(record{Kind: kindReady}); err != nil {
		return err
	}
	for {
		cmd, err := ch.next()
		if errors.Is(err, io.EOF) {
			return ch.emit(record{Kind: kindDone})
		}
		if err != nil {
			return err
		}
		start := time.Now()
		_, err = tasklist.New(s.tasks, cmd.List).ClaimTask(ctx, cmd.ID, c.Agent)
		end := time.Now()
		if err := ch.emit(record{Kind: kindOp, ID: cmd.ID, Start: start.UnixNano(), End: end.UnixNano(), Outcome: claimOutcome(err), Err: errString(err)}); err != nil {
			return err
		}
	}
}

func claimOutcome(err error) string {
	switch {
	case err == nil:
		return outWon
	case errors.Is(err, tasklist.ErrClaimed):
		return outClaimed
	case errors.Is(err, tasklist.ErrNotFound):
		return outNotFound
	case errors.Is(err, tasklist.ErrNoneReady):
		return outNoneReady
	}
	return outOther
}

// maxDrainErrors ends a drain that keeps failing.
const maxDrainErrors = 50

// drain claims and completes tasks of c.List until none is ready.
func (ch *childIO) drain(ctx context.Context, s stores, c childConfig) error {
	store := &countingStore{Store: s.tasks}
	l := tasklist.New(store, c.List)
	if err := ch.barrier(); err != nil {
		return err
	}
	errs := 0
	for errs < maxDrainErrors {
		before, busyBefore := store.lost, store.busy
		start := time.Now()
		t, err := l.Claim(ctx, c.Agent)
		end := time.Now()
		wasted, busy := store.lost-before, store.busy-busyBefore
		if errors.Is(err, tasklist.ErrNoneReady) {
			if err := ch.emit(record{Kind: kindOp, Start: start.UnixNano(), End: end.UnixNano(), Outcome: outNoneReady, Wasted: wasted}); err != nil {
				return err
			}
			break
		}
		if err != nil {
			errs++
			if err := ch.emit(record{Kind: kindOp, Start: start.UnixNano(), End: end.UnixNano(), Outcome: claimOutcome(err), Err: err.Error(), Wasted: wasted}); err != nil {
				return err
			}
			continue
		}
		if err := ch.emit(record{Kind: kindOp, ID: t.ID, Start: start.UnixNano(), End: end.UnixNano(), Outcome: outWon, Wasted: wasted, Busy: busy, Write: int64(store.won)}); err != nil {
			return err
		}
		done := tasklist.StatusCompleted
		if _, err := l.Update(ctx, t.ID, tasklist.Update{Status: &done}); err != nil {
			errs++
			if err := ch.emit(record{Kind: kindOp, ID: t.ID, Outcome: outUpdateError, Err: err.Error()}); err != nil {
				return err
			}
		}
	}
	return ch.emit(record{Kind: kindDone})
}

// countingStore counts the compare-and-swaps a claimer lost: attempts that
// found the task changed or gone (the peer's "wasted attempts"), and the
// tasks it passed over as busy. It times the last successful write (the
// peer's claim latency covers only its one successful claimTask call). It
// passes TryPut on, so that Claim runs as it does on the store itself.
type countingStore struct {
	tasklist.Store
	// One goroutine per child: no lock needed.
	lost, busy int
	won        time.Duration
}

func (c *countingStore) Put(ctx context.Context, list string, t tasklist.Task, prev tasklist.Revision) (tasklist.Revision, error) {
	return c.count(func() (tasklist.Revision, error) { return c.Store.Put(ctx, list, t, prev) })
}

func (c *countingStore) TryPut(ctx context.Context, list string, t tasklist.Task, prev tasklist.Revision) (tasklist.Revision, error) {
	tp, ok := c.Store.(tasklist.TryPutter)
	if !ok {
		return c.Put(ctx, list, t, prev)
	}
	return c.count(func() (tasklist.Revision, error) { return tp.TryPut(ctx, list, t, prev) })
}

func (c *countingStore) count(put func() (tasklist.Revision, error)) (tasklist.Revision, error) {
	start := time.Now()
	rev, err := put()
	switch {
	case err == nil:
		c.won = time.Since(start)
	case errors.Is(err, tasklist.ErrConflict) || errors.Is(err, tasklist.ErrNotFound):
		c.lost++
	case errors.Is(err, tasklist.ErrBusy):
		c.busy++
	}
	return rev, err
}
