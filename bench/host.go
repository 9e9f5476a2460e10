package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/llm/scripted"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/team"
)

// Teammate is what a team host runs each of its teammates with: it runs
// one in-process teammate, s.Name of team s.Team on the stores with model
// s.Model, until ctx ends. The caller (cmd, with the swarm runtime)
// supplies it, so that this package does not import the team runtime,
// whose own tests import this package.
type Teammate func(ctx context.Context, s TeammateSpec) error

// TeammateSpec describes one teammate of a team host.
type TeammateSpec struct {
	Team, Name, Prompt string
	Teams              team.Store
	Mail               mailbox.Store
	Tasks              tasklist.Store
	Model              llm.Model
	// OnIdle is called each time the teammate finishes a turn and goes
	// idle; OnClaim when it claims a task (with the task's id).
	OnIdle  func()
	OnClaim func(taskID string)
}

// Child runs benchmark children. The zero value runs every role but the
// team host, which needs Teammate.
type Child struct {
	Teammate Teammate
}

// Host phases, runner to host, after "go" (which spawns the teammates).
const (
	phaseIdle = "idle" // measure CPU over the idle window, then RSS
	phasePing = "ping" // send the pings
	phaseDump = "dump" // write every goroutine's stack to a file
)

// Host record kinds.
const (
	kindSpawned = "spawned" // every teammate of the host was idle once
	kindIdle    = "idle"    // the idle window's CPU and the RSS
	kindPinged  = "pinged"  // the host sent its pings
	kindDumped  = "dumped"  // the host wrote its goroutines (ID: the file)
)

// teamScript is every in-process teammate's model: a claimed task is
// completed with TaskUpdate, anything else answered with a line.
const teamScript = `{"turns":[
 {"match":{"user":"You claimed task #"},"reply":{"tool_calls":[{"name":"TaskUpdate","input":{"taskId":"{{capture:You claimed task #([0-9]+)}}","status":"completed"}}]},"repeat":true},
 {"match":{"tool_result":"TaskUpdate"},"reply":{"text":"done"},"repeat":true},
 {"match":{},"reply":{"text":"ok"},"repeat":true}
]}`

// pingMark finds a ping's id in a prompt: "<ping ID>".
var pingMark = regexp.MustCompile(`<(ping-[0-9]+-[0-9]+-[0-9]+)>`)

// host runs c.Agents as in-process teammates (swarm.Teammate, scripted
// model) of team c.Team until stdin ends. After "go" it adds them to the
// team and starts them one at a time, and reports kindSpawned when each
// was idle once; then it follows the phases the runner sends. Every claim
// a teammate makes is reported as an op; every ping a teammate's model is
// woken with, as seen.
func (ch *childIO) host(ctx context.Context, s stores, c childConfig) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	script, err := scripted.Parse([]byte(teamScript))
	if err != nil {
		return err
	}
	model := &wakeModel{Model: scripted.New(script), seen: func(id string, at time.Time) {
		ch.emit(record{Kind: kindSeen, ID: id, Start: at.UnixNano()})
	}}
	if err := ch.barrier(); err != nil {
		return err
	}
	rssBefore := rssBytes()
	start := time.Now()
	idle := make(chan string, len(c.Agents))
	var firstIdle sync.Map
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	if ch.teammate == nil {
		return errors.New("bench host: no teammate runtime given (bench.Child.Teammate)")
	}
	for _, name := range c.Agents {
		if _, err := team.AddMember(ctx, s.teams, c.Team, team.Member{Name: name, BackendType: "in-process"}, time.Now()); err != nil {
			return fmt.Errorf("bench host: add %s: %w", name, err)
		}
		spec := TeammateSpec{Team: c.Team, Name: name, Prompt: "You are up.", Teams: s.teams, Mail: s.mail, Tasks: s.tasks, Model: model,
			OnIdle: func() {
				if _, again := firstIdle.LoadOrStore(name, true); !again {
					idle <- name
				}
			},
			OnClaim: func(id string) {
				ch.emit(record{Kind: kindOp, ID: id, Outcome: outWon, Start: time.Now().UnixNano(), Err: name})
			}}
		wg.Go(func() {
			if err := ch.teammate(ctx, spec); err != nil && ctx.Err() == nil {
				ch.emit(record{Kind: kindOp, Outcome: outOther, Err: fmt.Sprintf("teammate %s: %v", name, err)})
			}
		})
	}
	for range c.Agents {
		select {
		case <-idle:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	perIdle := int64(0)
	if n := int64(len(c.Agents)); n > 0 {
		perIdle = (rssBytes() - rssBefore) / n
	}
	if c.Profile != "" {
		if err := writeProfiles(strings.TrimSuffix(c.Profile, ".pprof")+"-spawned", "heap", "goroutine"); err != nil {
			return err
		}
	}
	if err := ch.emit(record{Kind: kindSpawned, Start: start.UnixNano(), End: time.Now().UnixNano(), RSS: rssBytes(), PerIdle: perIdle}); err != nil {
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
		switch cmd.Phase {
		case phaseIdle:
			before := cpuTime()
			sleep(ctx, c.Idle)
			if err := ch.emit(record{Kind: kindIdle, CPU: int64(cpuTime() - before), RSS: rssBytes(), End: int64(c.Idle)}); err != nil {
				return err
			}
		case phasePing:
			if err := ch.ping(ctx, s.mail, c, cmd.Round); err != nil {
				return err
			}
		case phaseDump:
			// Asked after a round that missed pings: where each
			// teammate's goroutine waits tells why it did not wake.
			path := filepath.Join(c.Dir, fmt.Sprintf("goroutines-round-%d.txt", cmd.Round))
			if err := writeProfile(path, "goroutine", 2); err != nil {
				return err
			}
			if err := ch.emit(record{Kind: kindDumped, ID: path}); err != nil {
				return err
			}
		default:
			return fmt.Errorf("bench host: unknown phase %q", cmd.Phase)
		}
	}
}

// ping sends c.N messages, one at a time, to c.Targets in turn, from the
// host's first teammate; each text carries its id (host, round, number)
// for the recipient's model to report.
func (ch *childIO) ping(ctx context.Context, mail mailbox.Store, c childConfig, round int) error {
	if len(c.Targets) == 0 || len(c.Agents) == 0 {
		return ch.emit(record{Kind: kindPinged})
	}
	for i := range c.N {
		id := fmt.Sprintf("ping-%d-%d-%d", c.Host, round, i)
		to := c.Targets[i%len(c.Targets)]
		start := time.Now()
		_, err := mail.Send(ctx, c.Team, to, mailbox.Message{From: c.Agents[0], Text: "PING <" + id + ">", Summary: "ping", Timestamp: start})
		end := time.Now()
		if err := ch.emit(record{Kind: kindOp, ID: id, Start: start.UnixNano(), End: end.UnixNano(), Outcome: sendOutcome(err), Err: errString(err)}); err != nil {
			return err
		}
		if c.GapMax > 0 {
			if err := sleep(ctx, c.GapMax); err != nil {
				return err
			}
		}
	}
	return ch.emit(record{Kind: kindPinged})
}

// wakeModel reports the pings in the newest user message of each request:
// the moment the recipient's model is asked is when the teammate woke.
type wakeModel struct {
	llm.Model
	seen func(id string, at time.Time)
}

func (m *wakeModel) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	now := time.Now()
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role != llm.RoleUser {
			continue
		}
		for _, mm := range pingMark.FindAllStringSubmatch(req.Messages[i].Text(), -1) {
			m.seen(mm[1], now)
		}
		break
	}
	return m.Model.Stream(ctx, req)
}

// rssBytes returns this process's resident set size, or 0 where
// /proc/self/status does not tell it.
func rssBytes() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			if len(f) >= 1 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}

// ChildTestEnv, set to "1", makes a test binary of this package play a
// bench child instead of running its tests (its TestMain).
const ChildTestEnv = "TROUPE_BENCH_TEST_CHILD"

// writeProfiles writes the named runtime profiles (pprof.Lookup) to
// base-<name>.pprof, for go tool pprof: what a host holds once its team
// is idle.
func writeProfiles(base string, names ...string) error {
	for _, name := range names {
		if err := writeProfile(base+"-"+name+".pprof", name, 0); err != nil {
			return err
		}
	}
	return nil
}

// writeProfile writes the runtime profile name to path, in pprof's
// format (debug 0) or as text (debug 1 or 2: for goroutines, 2 is every
// stack as a panic prints it).
func writeProfile(path, name string, debug int) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("bench host: %w", err)
	}
	err = pprof.Lookup(name).WriteTo(f, debug)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("bench host: write %s profile: %w", name, err)
	}
	return nil
}
