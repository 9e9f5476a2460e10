// Package tui is the interactive lead: a Bubble Tea program over a
// session.Session. The model is a pure Elm loop: session events arrive
// as messages (Run forwards a subscription), Update changes only the
// model, and every input to the session (a prompt, an answer, a stop)
// leaves as a command that calls the session's methods.
package tui

import (
	"context"
	"errors"
	"io"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/schedule"
	"github.com/troupe-dev/troupe/session"
	"github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/transcript"
)

// Driver is what the interactive lead asks of its session; a
// *session.Session is one.
type Driver interface {
	Submit(ctx context.Context, prompt string)
	Interrupt() bool
	Background(ctx context.Context) (task.ID, error)
	Foreground(ctx context.Context, id task.ID) error
	Answer(id string, v session.Verdict) error
	SendTo(ctx context.Context, teammate, text string) error
	InterruptTeammate(teammate string) (bool, error)
	Rules() (allow, ask, deny []permission.Rule)
	AddRule(b permission.Behavior, rule string) error
	RemoveRule(b permission.Behavior, rule string) (note string, err error)
	Stop(ctx context.Context, id string) (task.State, error)
	SetMode(mode string) error
	Compact(ctx context.Context) error
	// Clear starts a fresh conversation (/clear); SetModel switches the
	// lead's model for its next turn (/model NAME); Model is the name set
	// so ("" for the one the lead started with). Both refuse while the
	// lead works.
	Clear() error
	SetModel(name string) error
	Model() string
}

// Options set up the interactive lead.
type Options struct {
	Title string // shown in the header: the session and model
	Model string // the lead's model at the start, for /model
	// Dir is the working folder: paths in it are shown relative, and a
	// command's dialog names it.
	Dir     string
	Mode    string // the lead's permission mode at the start
	NoColor bool   // NO_COLOR: plain text only
	// NoAltScreen keeps the conversation in the terminal's own scrollback
	// (inline.go) instead of the alternate screen.
	NoAltScreen bool
	// Teams says agent teams are on: the welcome line and /team speak of
	// teammates only then.
	Teams bool
	// Commands are the custom slash commands (name: description) beside
	// the built-in ones, for completion.
	Commands map[string]string
	// Schedule is the schedule at the start (a resumed session's), for
	// the footer's next wake; its changes come as session events.
	Schedule *schedule.State
	// Tasks are the tasks known at the start (a resumed session's).
	Tasks []task.State
	// Input and Output default to the terminal (stdin and stdout).
	Input  io.Reader
	Output io.Writer
	Now    func() time.Time
	// Cost, when set, prices the lead's usage in US dollars (false: the
	// model's price is not known).
	Cost func(u llm.Usage) (float64, bool)
	// Spent, when set, is the whole session's spending (the lead, its
	// teammates and sub-agents) and its limits; the footer shows it
	// instead of the lead's. It is read in Update, on each session
	// event, and must be quick.
	Spent func() Spent
	// Prompt, when set, is submitted at the start.
	Prompt string
	// History is the resumed conversation, shown before the first prompt.
	History []llm.Message
	// Sessions lists the recent sessions of the working folder, newest
	// first, for /resume (called from a command: it may read files).
	Sessions func() []SessionInfo
	// CheckResume, when set, tells whether the session picked with
	// /resume can be opened (called from a command: it may read files).
	// On an error the error is shown and this session goes on.
	CheckResume func(id string) error
	// Slash handles a slash command the model does not know itself
	// (a custom command, /model, /compact): it returns the text to show.
	Slash func(ctx context.Context, name, args string) (prompt string, note string, err error)
	// Transcript, when set, reads a teammate's transcript from offset
	// from on (transcript.Tail): the teammate's view then shows what it
	// wrote and did, not only its timeline. Called from a command.
	Transcript func(name string, from int64) ([]transcript.Line, int64, error)
	// Board, when set, reads the team's shared task list for the task
	// board (Ctrl+T, /board; BoardOf builds one): the team's name ("" when
	// there is no team) and its tasks. Called from a command.
	Board func(ctx context.Context) (team string, tasks []tasklist.Task, err error)
}

// SessionInfo is a recorded session /resume offers.
type SessionInfo struct {
	ID     string
	When   time.Time
	Prompt string // its first prompt
}

// Outcome is how the interactive lead ended.
type Outcome struct {
	// Resume is the session the person picked with /resume: the caller
	// opens it in place of this one.
	Resume string
}

// eventMsg carries a session event into Update.
type eventMsg struct{ e session.Event }

// Run runs the interactive lead on sess until the person quits or ctx
// ends. The error is nil on a normal exit.
func Run(ctx context.Context, sess *session.Session, opts Options) (Outcome, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	m := newModel(ctx, sess, opts)
	var popts []tea.ProgramOption
	// 120 frames a second (Bubble Tea's most): a keystroke is on screen within
	// one frame interval of 8.3 ms plus the model's own time.
	popts = append(popts, tea.WithContext(ctx), tea.WithFPS(120))
	if opts.Input != nil {
		popts = append(popts, tea.WithInput(opts.Input))
	}
	if opts.Output != nil {
		popts = append(popts, tea.WithOutput(opts.Output))
	}
	p := tea.NewProgram(m, popts...)
	if m.printer != nil {
		pctx, stop := context.WithCancel(ctx)
		defer stop()
		go m.printer.run(pctx, p.Send)
	}
	sub := sess.Subscribe(true)
	defer sub.Close()
	fctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		for {
			e, err := sub.Next(fctx)
			if err != nil {
				return
			}
			p.Send(eventMsg{e})
		}
	}()
	go func() {
		t := time.NewTicker(time.Second / 4)
		defer t.Stop()
		for {
			select {
			case <-fctx.Done():
				return
			case now := <-t.C:
				p.Send(tickMsg(now))
			}
		}
	}()
	_, err := p.Run()
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		err = context.Cause(ctx)
	}
	return Outcome{Resume: m.resume}, err
}

// tickMsg moves the spinner and the clocks.
type tickMsg time.Time
