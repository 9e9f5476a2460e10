package tui

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/session"
	"github.com/troupe-dev/troupe/swarm"
	"github.com/troupe-dev/troupe/transcript"
)

// The teammate view's keys. Its text field takes every printable key, so
// a message such as "is it safe?" reaches the teammate whole: no letter
// is a hot key there. Esc interrupts the teammate's turn (a second Esc
// within 2 s, or Esc on a teammate not in a turn, goes back); Ctrl+X
// twice or /stop stops it; ← on an empty line or /back goes back. Ctrl+I
// is not used: terminals send it as Tab.

// openMate opens name's view; the lead's unsent prompt is set aside and
// given back when the view closes.
func (m *model) openMate(name string) tea.Cmd {
	m.mainDraft = m.input.Value()
	m.input.Reset()
	m.fitInput()
	m.viewMate, m.screen, m.confirmed, m.mateEsc = name, screenTeammate, "", time.Time{}
	if mv := m.mateInfo[name]; mv != nil {
		mv.convo.follow()
	}
	return m.readMate()
}

// closeMate goes back to the conversation with the lead's prompt as it
// was; what was typed to the teammate and not sent is dropped.
func (m *model) closeMate() {
	m.screen, m.viewMate, m.confirmed = screenMain, "", ""
	m.input.SetValue(m.mainDraft)
	m.mainDraft = ""
	m.fitInput()
}

func (m *model) mateKey(k tea.KeyPressMsg) tea.Cmd {
	name := m.viewMate
	mv := m.mateInfo[name]
	s := k.String()
	if m.confirmed == "stop" {
		m.confirmed = ""
		if s == "ctrl+x" {
			return m.stopMate(mv)
		}
		// Any other key keeps it, and does what it does.
	}
	m.notice = ""
	switch s {
	case "ctrl+x":
		m.confirmed = "stop"
		return nil
	case "esc":
		// The runtime, not the strip's state, tells whether it is in a
		// turn: one just woken by a message may still show idle.
		again := !m.mateEsc.IsZero() && m.now.Sub(m.mateEsc) < 2*time.Second
		m.mateEsc = m.now
		if again || mv == nil {
			m.closeMate()
			return nil
		}
		m.notice = "Interrupting " + name + "'s turn (Esc again goes back)"
		drv := m.drv
		return func() tea.Msg {
			switch ran, err := drv.InterruptTeammate(name); {
			case err != nil:
				return noticeMsg("⚠ " + err.Error())
			case !ran:
				return mateBackMsg(name) // not in a turn: Esc goes back
			}
			return noticeMsg("Interrupted " + name + "'s turn")
		}
	case "ctrl+o":
		if mv != nil {
			mv.convo.toggleLast()
		}
		return nil
	case "left":
		if m.input.Value() == "" {
			m.closeMate()
			return nil
		}
	case "enter":
		text := strings.TrimSpace(m.input.Value())
		if text == "" {
			return nil
		}
		m.input.Reset()
		m.fitInput()
		switch text {
		case "/stop":
			return m.stopMate(mv)
		case "/interrupt":
			return m.interruptMate(name)
		case "/back":
			m.closeMate()
			return nil
		}
		if mv != nil {
			mv.add(m.now, "you → "+name+": "+text)
			mv.convo.follow()
		}
		m.woken(name)
		m.notice = "Sent to " + name + ": it reads it at its next tool round, or as its next prompt"
		return m.do(func(ctx context.Context) error { return m.drv.SendTo(ctx, name, text) })
	case "shift+down", "shift+up": // the next or previous teammate
		if n := len(m.mates); n > 1 {
			i := 0
			for j, mn := range m.mates {
				if mn == name {
					i = j
				}
			}
			if s == "shift+down" {
				i = (i + 1) % n
			} else {
				i = (i + n - 1) % n
			}
			m.selMate = i
			draft := m.mainDraft
			cmd := m.openMate(m.mates[i])
			m.mainDraft = draft
			return cmd
		}
		return nil
	}
	if mv != nil && m.pageKey(&mv.convo, s, false) {
		return nil
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(k)
	m.fitInput()
	return cmd
}

// mateBackMsg closes the named teammate's view (Esc on a teammate not
// in a turn).
type mateBackMsg string

// stopMate stops the teammate's task.
func (m *model) stopMate(mv *mateView) tea.Cmd {
	if mv == nil || mv.task == "" {
		m.notice = "No running task to stop"
		return nil
	}
	id := mv.task
	if !ended(mv.state) {
		mv.state = "stopping"
	}
	return m.do(func(ctx context.Context) error { _, err := m.drv.Stop(ctx, string(id)); return err })
}

// interruptMate interrupts the teammate's current turn; it stays.
func (m *model) interruptMate(name string) tea.Cmd {
	drv := m.drv
	return func() tea.Msg {
		switch ran, err := drv.InterruptTeammate(name); {
		case err != nil:
			return noticeMsg("⚠ " + err.Error())
		case !ran:
			return noticeMsg(name + " was not in a turn")
		}
		return noticeMsg("Interrupted " + name + "'s turn")
	}
}

// mate returns the teammate named name, adding it to the strip.
func (m *model) mate(name string) *mateView {
	mv := m.mateInfo[name]
	if mv == nil {
		mv = &mateView{name: name, state: "working"}
		m.mateInfo[name] = mv
		m.mates = append(m.mates, name)
	}
	return mv
}

func (mv *mateView) add(at time.Time, line string) {
	mv.lines = append(mv.lines, line)
	if len(mv.lines) > maxMateLines {
		mv.lines = slices.Delete(mv.lines, 0, len(mv.lines)-maxMateLines)
	}
	mv.lastAt = at
}

// team applies a line of the team's timeline.
func (m *model) team(e swarm.Event, kind session.Kind) {
	if e.Agent == "" || e.Agent == "team-lead" {
		if kind == session.KindTeamCreated || kind == session.KindTeamDeleted {
			m.convo.add(entry{kind: entryQuiet, text: e.Text})
		}
		return
	}
	mv := m.mate(e.Agent)
	text := e.Text
	if e.Body != "" {
		text = e.Body
	}
	mv.add(e.Time, text)
	switch e.Kind {
	case swarm.EventIdle:
		if !ended(mv.state) && mv.state != "stopping" {
			mv.state = "idle"
		}
		m.convo.add(entry{kind: entryQuiet, who: e.Agent, color: mv.color, text: "is idle"})
	case swarm.EventMessage:
		m.convo.add(entry{kind: entryMessage, who: e.Agent, color: mv.color, text: text})
		if !ended(mv.state) && mv.state != "stopping" {
			mv.state = "working"
		}
	case swarm.EventDead:
		mv.state = "dead"
		m.convo.add(entry{kind: entryError, who: e.Agent, text: e.Text})
	case swarm.EventShutdown:
		if strings.Contains(e.Text, "rejected") {
			mv.state = "working"
		} else if !ended(mv.state) {
			mv.state = "stopping"
		}
	case swarm.EventExit:
		if mv.state != "dead" && mv.state != "stopped" {
			mv.state = "shut down"
		}
	case swarm.EventSpawned, swarm.EventFallback:
		mv.state = "working"
		m.convo.add(entry{kind: entryQuiet, who: e.Agent, color: mv.color, text: "joined: " + e.Text})
	case swarm.EventPermission, swarm.EventPlan:
		// Whether it waits is read from the open questions (mateState).
	default:
		if !ended(mv.state) && mv.state != "idle" && mv.state != "stopping" {
			mv.state = "working"
		}
	}
}

// ended reports whether a teammate's state is final.
func ended(state string) bool {
	return state == "dead" || state == "shut down" || state == "stopped"
}

// mateState is the state a teammate is shown in: "waiting" while a
// permission question of its own is open (and only then), "plan" while
// its plan awaits approval, else what its events said.
func (m *model) mateState(mv *mateView) string {
	if ended(mv.state) || mv.state == "stopping" {
		return mv.state
	}
	for _, q := range m.questions {
		if q.Agent == mv.name {
			if q.Plan != "" {
				return "plan"
			}
			return "waiting"
		}
	}
	if mv.state == "waiting" || mv.state == "plan" {
		return "working"
	}
	return mv.state
}

// woken marks the teammates a message wakes as working at once: name, or
// every idle one for "*".
func (m *model) woken(name string) {
	for _, n := range m.mates {
		if mv := m.mateInfo[n]; (n == name || name == "*") && mv.state == "idle" {
			mv.state = "working"
		}
	}
}

// readMate returns the command that reads what the open teammate's
// transcript gained since the last read; nil when no view is open, a
// read is under way or there are no transcripts.
func (m *model) readMate() tea.Cmd {
	if m.screen != screenTeammate || m.opts.Transcript == nil {
		return nil
	}
	mv := m.mateInfo[m.viewMate]
	if mv == nil || mv.reading {
		return nil
	}
	mv.reading = true
	read, name, from := m.opts.Transcript, mv.name, mv.off
	return func() tea.Msg {
		lines, next, err := read(name, from)
		return transcriptMsg{name: name, lines: lines, next: next, err: err}
	}
}

// said adds what a read of a teammate's transcript found to its view.
func (m *model) said(msg transcriptMsg) {
	mv := m.mateInfo[msg.name]
	if mv == nil {
		return
	}
	mv.reading, mv.off, mv.readErr = false, msg.next, ""
	if msg.err != nil && !errors.Is(msg.err, fs.ErrNotExist) {
		mv.readErr = msg.err.Error()
	}
	for _, l := range msg.lines {
		m.sayTo(&mv.convo, l)
	}
	if n := len(mv.convo.entries) - maxSaidEntries; n > 0 {
		mv.convo.drop(n)
	}
}

// sayTo adds one transcript line to a teammate's conversation: its words
// whole, each tool call as an action with its outcome, the messages it
// got as who said what.
func (m *model) sayTo(c *convo, l transcript.Line) {
	switch l.Type {
	case agent.EventUser:
		if l.Message == nil {
			return
		}
		notes, t := runtimeNotes(strings.TrimSpace(l.Message.Text()))
		for _, n := range notes {
			c.add(entry{kind: entryQuiet, text: n})
		}
		if t == "" {
			return
		}
		if msgs := teammateMessages(t); len(msgs) > 0 {
			for _, tm := range msgs {
				color := tm.color
				if mv := m.mateInfo[tm.from]; mv != nil && mv.color != "" {
					color = mv.color
				}
				c.add(entry{kind: entryMessage, who: tm.from, color: color, text: tm.text})
			}
			return
		}
		c.add(entry{kind: entryUser, text: t})
	case agent.EventAssistant:
		if l.Message != nil {
			if t := strings.TrimSpace(l.Message.Text()); t != "" {
				c.add(entry{kind: entryAssistant, text: t})
			}
		}
	case agent.EventToolUse:
		if l.Call != nil {
			c.add(entry{kind: entryTool, id: l.Call.ToolUseID, tool: l.Call.Name, text: toolTitle(m.opts.Dir, l.Call.Name, l.Call.Input), input: l.Call.Input})
		}
	case agent.EventToolResult:
		if l.ToolResult != nil {
			c.toolDone(l.ToolResult.ToolUseID, l.ToolResult.IsError, l.ToolResult.Text, time.Duration(l.ElapsedMS)*time.Millisecond)
		}
	case agent.EventRetry:
		c.add(entry{kind: entryError, text: "retry: " + firstLineOf(l.Error)})
	case agent.EventCompact:
		c.add(entry{kind: entryQuiet, text: "the conversation was compacted"})
	case agent.EventResult:
		if l.Error != "" {
			c.add(entry{kind: entryError, text: "run ended: " + firstLineOf(l.Error)})
			return
		}
		c.add(entry{kind: entryQuiet, text: "turn ended"})
	}
}
