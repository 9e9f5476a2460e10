package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/internal/termtext"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/settings"
	"github.com/troupe-dev/troupe/session"
	"github.com/troupe-dev/troupe/session/kit"
	"github.com/troupe-dev/troupe/session/streamjson"
	"github.com/troupe-dev/troupe/swarm"
	"github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/team"

	"github.com/troupe-dev/troupe/tool/agenttool"
	"github.com/troupe-dev/troupe/tool/asktool"
)

// background is the cmd side of a headless run: the session (package
// session: the lead's runs, its task registry and team) and what the
// command prints of it, through one subscription to the session's events.
type background struct {
	sess *session.Session
	wd   *kit.Workdir // the lead's working folder, which EnterWorktree moves; nil for a coordinator
	reg  *task.Registry
	dir  string // the registry's output folder
	sub  *session.Subscription
	out  *streamjson.Writer
	now  func() time.Time
	done chan struct{} // closed when the printer has printed every event

	// The agent team, when teams are on (swarm.go).
	team         *leadTeam
	stderr       io.Writer         // the team's timeline in text output
	onTeamEvent  func(swarm.Event) // sees every timeline event
	leadTimeline func(agent.Event) // the lead's tool calls on the timeline
	remote       agenttool.Remote  // remote agents, with a NATS store (remote.go)
	ac           *kit.Context      // the lead's instructions and environment, for its sub-agents (context.go)
	tx           *kit.Transcripts  // the session's transcripts (session.go: transcriptsFor)
	notice       io.Writer         // a headless run's stderr, for schedule firings in text output (schedule.go)
	// presence follows the lead's runs (peers.go); set once, after the
	// printer started.
	presence atomic.Pointer[kit.Presence]
	// questions answers the lead's AskUserQuestion calls: the person
	// (interactive), the --permission-prompt-command, or nil (nobody).
	questions asktool.Asker
}

func newBackground(cwd, sessionID string, out *streamjson.Writer, now func() time.Time, interactive bool) (*background, error) {
	dir, err := task.OutputDir("", kit.ProjectSlug(cwd), sessionID)
	if err != nil {
		return nil, err
	}
	reg := task.New(task.Config{Dir: dir})
	local := filepath.Join(cwd, ".troupe", "settings.local.json") // where a person's rule changes are kept
	sess, err := session.New(session.Config{Registry: reg, Now: now, Interactive: interactive, RuleSource: local,
		SaveRule: func(b permission.Behavior, rule string, add bool) error {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if add {
				return settings.AddRule(ctx, local, b, rule)
			}
			return settings.RemoveRule(ctx, local, b, rule)
		}})
	if err != nil {
		return nil, err
	}
	b := &background{sess: sess, reg: reg, dir: dir, out: out, now: now, stderr: io.Discard, done: make(chan struct{})}
	b.sub = sess.Subscribe(false)
	go b.print()
	return b, nil
}

// DefaultTaskOutputRetentionDays is the default of the
// taskOutputRetentionDays setting.
const DefaultTaskOutputRetentionDays = 7

// sweepTaskOutputs removes, from temp's per-user output folder ("": the
// system's), the task output folders of sessions in which nothing was
// written for taskOutputRetentionDays (a setting of files, default 7),
// never keep (the running session's). It returns the folders removed and
// a warning for the user ("" when none): a bad setting (named, with its
// file; the default is used) or a failed removal.
func sweepTaskOutputs(files []settings.File, temp, keep string, now time.Time) ([]string, string) {
	var warn string
	days, file, err := settings.Key[float64](files, "taskOutputRetentionDays")
	switch {
	case err != nil:
		warn = err.Error() + fmt.Sprintf("; keeping task outputs %d days", DefaultTaskOutputRetentionDays)
		days = DefaultTaskOutputRetentionDays
	case file == "":
		days = DefaultTaskOutputRetentionDays
	case days <= 0:
		warn = fmt.Sprintf("%s: taskOutputRetentionDays %v: want a positive number of days; keeping task outputs %d days", file, days, DefaultTaskOutputRetentionDays)
		days = DefaultTaskOutputRetentionDays
	}
	removed, err := task.SweepOutputs(temp, now.Add(-time.Duration(days*float64(24*time.Hour))), keep)
	if err != nil {
		warn = strings.TrimPrefix(warn+"; "+err.Error(), "; ")
	}
	return removed, warn
}

// print writes the session's events as they come: stream-json lines, the
// team's timeline; it ends when the subscription is closed and drained.
func (b *background) print() {
	defer close(b.done)
	for {
		e, err := b.sub.Next(context.Background())
		if err != nil {
			return
		}
		if p := b.presence.Load(); p != nil {
			presenceState(p, e)
		}
		switch {
		case e.Peer != nil: // peers.go: who sent it, for the person
			b.peerMessage(*e.Peer)
		case e.Agent != nil && e.TaskID != "": // a backgrounded turn's: its task reports it
		case e.Agent != nil:
			b.out.Event(*e.Agent)
			if b.team != nil {
				if b.leadTimeline == nil {
					b.leadTimeline = kit.ToolTimeline(team.LeadName, b.now, b.teamEvent)
				}
				b.leadTimeline(*e.Agent)
			}
		case e.Task != nil:
			if se, ok := e.Task.StreamJSON(); ok {
				b.out.Task(se)
			}
		case e.Team != nil:
			b.teamEvent(*e.Team)
		case e.Firing != nil: // schedule.go
			b.out.Fired(*e.Firing, b.notice)
		case e.Schedule != nil:
			b.out.Schedule(*e.Schedule)
		}
	}
}

// flush waits until every event so far is printed; nothing is printed
// after it.
func (b *background) flush() {
	b.sub.Close()
	<-b.done
}

// close stops what is still running (no orphan shells) and waits for it.
func (b *background) close() {
	if b.team != nil {
		b.team.close()
	}
	b.flush()
	b.sess.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b.reg.Close(ctx)
	kit.PruneOutputDir(b.dir)
}

// reportUnfinished says on w which of the lead's background tasks still
// run as the run ends (it was interrupted, or a budget stopped it): close
// stops them, and nobody else would say so. A run that ends normally has
// waited for them all (session.Run).
func (b *background) reportUnfinished(w io.Writer) {
	for _, s := range b.reg.List() {
		if !s.Status.Active() || s.Type == task.InProcessTeammate { // teammates: their team reports them
			continue
		}
		what := s.Description
		if sh, ok := s.Detail.(*task.Shell); ok && what == "" {
			what = sh.Command
		}
		b.out.Notice(w, fmt.Sprintf("troupe: stopping background task %s (%s %q): the run ended before it did", s.ID, s.Type, termtext.Line(what)))
	}
}

// endTeam ends the lead's team with the run: its teammates are stopped
// and, unless keep, the team is removed (swarm.Lead.EndSession). It runs
// even when the run was interrupted, on a context of its own.
func (b *background) endTeam(keep bool) {
	if b.team == nil || keep {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// A team left in place is on the timeline as a warning.
	_, _ = b.team.Lead.EndSession(ctx)
}

// teamEvent reports one line of the team's timeline: a stream-json event,
// or a line on stderr in the text formats. Only the printer calls it.
func (b *background) teamEvent(e swarm.Event) {
	if b.onTeamEvent != nil {
		b.onTeamEvent(e)
	}
	if b.out.TeamEvent(e.Agent, e.Kind, e.Text) {
		return
	}
	// Budget notices go to stderr too, from the goroutine that spent.
	b.out.Notice(b.stderr, fmt.Sprintf("%s %-10s %s", e.Time.Format("15:04:05.000"), termtext.Line(e.Agent), termtext.Clean(e.Text)))
}
