package tui

import (
	"context"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
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
