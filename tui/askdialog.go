package tui

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/troupe-dev/troupe/ask"
	"github.com/troupe-dev/troupe/internal/termtext"
	"github.com/troupe-dev/troupe/session"
)

// picker is the state of an open question set (AskUserQuestion,
// docs/ask.md): which question shows, the focused row of each (its
// options, then "Other"), what is chosen and what is answered.
type picker struct {
	id      string // the session.Question it answers
	tab     int    // the question shown
	cursor  []int
	chosen  []map[int]bool // multiSelect: the options ticked
	other   []string       // the "Other" text typed, per question
	answers ask.Answers
	typing  bool // the "Other" field is open (m.input holds the text)
}

// sideBySide is the width from which a preview shows beside the
// options rather than below them.
const sideBySide = 100

// pickerFor returns the picker of q, made fresh when q is new.
func (m *model) pickerFor(q session.Question) *picker {
	if m.pick == nil || m.pick.id != q.ID {
		n := len(q.Questions)
		m.pick = &picker{id: q.ID, cursor: make([]int, n), chosen: make([]map[int]bool, n), other: make([]string, n), answers: ask.Answers{}}
		for i := range m.pick.chosen {
			m.pick.chosen[i] = map[int]bool{}
		}
	}
	return m.pick
}

// askDialog lays out the open question set in at most h lines, and the
// line of its "Other" field (-1 when closed).
func (m *model) askDialog(q session.Question, h int) ([]string, int) {
	p := m.pickerFor(q)
	qq := q.Questions[p.tab]
	w := m.width
	more := ""
	if len(m.questions) > 1 {
		more = m.st.dim(fmt.Sprintf(" (%d more waiting)", len(m.questions)-1))
	}
	head := []string{m.st.dim(strings.Repeat("─", w)), m.st.name(q.Agent, q.Color) + " asks you" + more + ":"}
	if len(q.Questions) > 1 {
		var tabs []string
		for i, x := range q.Questions {
			mark := "☐ "
			if _, ok := p.answers[x.Question]; ok {
				mark = "✓ "
			}
			t := mark + termtext.Line(x.Header)
			if i == p.tab {
				t = m.st.sel(" " + t + " ")
			} else {
				t = " " + t + " "
			}
			tabs = append(tabs, t)
		}
		head = append(head, strings.Split(ansi.Wrap(strings.Join(tabs, " "), w, " "), "\n")...)
	} else {
		head = append(head, m.st.accent("["+termtext.Line(qq.Header)+"]"))
	}
	head = append(head, textLines("", "", qq.Question, w, m.st.bold)...)

	// The options on the left, the focused one's preview on the right
	// (below them when the screen is narrow).
	hasPreview := false
	for _, o := range qq.Options {
		hasPreview = hasPreview || o.Preview != ""
	}
	lw := w
	if hasPreview && w >= sideBySide {
		lw = w * 2 / 5
	}
	var left []string
	for i, o := range qq.Options {
		left = append(left, m.optionLines(p, i, o.Label, o.Description, qq.MultiSelect, false, lw)...)
	}
	otherText := "type your own answer"
	if t := p.other[p.tab]; t != "" {
		otherText = "“" + t + "”"
	}
	left = append(left, m.optionLines(p, len(qq.Options), ask.Other, otherText, qq.MultiSelect, true, lw)...)
	body := left
	if hasPreview {
		var pv []string
		if c := p.cursor[p.tab]; c < len(qq.Options) && qq.Options[c].Preview != "" {
			pw := w
			if lw < w {
				pw = w - lw - 3
			}
			pv = textLines("", "", qq.Options[c].Preview, pw, plain)
		} else {
			pv = []string{m.st.dim("(no preview for this choice)")}
		}
		if lw < w {
			body = beside(left, pv, lw, m.st.dim(" │ "))
		} else {
			body = append(append(body, m.st.dim("preview:")), indent(pv, "  ")...)
		}
	}

	n := strconv.Itoa(len(qq.Options) + 1)
	tab := ""
	if len(q.Questions) > 1 {
		tab = " · Tab next question"
	}
	keys := fmt.Sprintf("%s move · %s choose · %s submit%s · %s decline",
		m.st.accent("↑↓"), m.st.accent("1-"+n), m.st.accent("Enter"), tab, m.st.accent("Esc"))
	if qq.MultiSelect {
		keys = fmt.Sprintf("%s move · %s toggle · %s submit the ticked%s · %s decline",
			m.st.accent("↑↓"), m.st.accent("Space/1-"+n), m.st.accent("Enter"), tab, m.st.accent("Esc"))
	}
	foot := strings.Split(ansi.Wrap(keys, w, " "), "\n")
	if m.qNote != "" {
		foot = append([]string{m.st.warn(m.qNote)}, foot...)
	}
	at := -1
	if p.typing {
		foot = append(wrapped("", "Your answer to “"+termtext.Line(qq.Header)+"” (Enter sends, Esc back):", w, plain), strings.Split(m.input.View(), "\n")...)
		at = len(foot) - m.input.Height()
	}
	out := m.box(head, body, foot, h, &m.qScroll)
	if at >= 0 {
		at += len(out) - len(foot)
	}
	return out, at
}

// optionLines is one choice in w cells: its number and label, marked
// when focused (and ticked, multiSelect), its description below.
func (m *model) optionLines(p *picker, i int, label, desc string, multi, other bool, w int) []string {
	focus := p.cursor[p.tab] == i
	mark := "  "
	if focus {
		mark = m.st.accent("❯ ")
	}
	box := ""
	switch {
	case multi && other:
		box = "    " // Other is typed, not ticked
	case multi && p.chosen[p.tab][i]:
		box = "[✓] "
	case multi:
		box = "[ ] "
	}
	first := mark + box + fmt.Sprintf("%d. ", i+1)
	style := plain
	if focus {
		style = m.st.bold
	}
	out := wrapped(first, termtext.Line(label), w, style)
	pad := strings.Repeat(" ", ansi.StringWidth(first))
	return append(out, textLines(pad, pad, desc, w, m.st.dim)...)
}

// beside joins two columns: left padded to lw cells, sep, then right.
func beside(left, right []string, lw int, sep string) []string {
	n := max(len(left), len(right))
	out := make([]string, n)
	for i := range n {
		var l, r string
		if i < len(left) {
			l = left[i]
		}
		if i < len(right) {
			r = right[i]
		}
		out[i] = strings.TrimRight(l+strings.Repeat(" ", max(0, lw-ansi.StringWidth(l)))+sep+r, " ")
	}
	return out
}

func indent(ls []string, p string) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = p + l
	}
	return out
}

// askKey handles a key in the open question set. A question answered
// moves to the next unanswered one; the last answer sends them all.
func (m *model) askKey(q session.Question, k tea.KeyPressMsg) tea.Cmd {
	p := m.pickerFor(q)
	qq := q.Questions[p.tab]
	nOpts := len(qq.Options)
	send := func(v session.Verdict) tea.Cmd {
		m.pick, m.qNote = nil, ""
		m.input.Reset()
		m.questions = m.questions[1:] // the answer event confirms it
		return m.do(func(context.Context) error { return m.drv.Answer(q.ID, v) })
	}
	// commit answers the shown question and moves on, or sends.
	commit := func(a string) tea.Cmd {
		p.answers[qq.Question] = a
		m.qNote = ""
		for i := range q.Questions {
			j := (p.tab + 1 + i) % len(q.Questions)
			if _, ok := p.answers[q.Questions[j].Question]; !ok {
				p.tab, m.qScroll = j, scroll{}
				return nil
			}
		}
		return send(session.Verdict{Allow: true, Answers: p.answers})
	}
	openOther := func() {
		p.typing = true
		m.input.Reset()
		m.input.InsertString(p.other[p.tab])
	}
	if p.typing {
		switch k.String() {
		case "enter":
			t := strings.TrimSpace(m.input.Value())
			if t == "" {
				m.qNote = "Type an answer, or Esc to go back to the choices."
				return nil
			}
			p.typing, p.other[p.tab] = false, t
			m.input.Reset()
			if qq.MultiSelect {
				return commit(ask.Join(append(ticked(qq, p.chosen[p.tab]), t)))
			}
			return commit(t)
		case "esc":
			p.typing = false
			m.input.Reset()
			return nil
		}
		var cmd tea.Cmd
		m.input, cmd = m.input.Update(k)
		return cmd
	}
	if scrollKey(&m.qScroll, k.String(), true) { // PgUp, PgDn, Home, End
		return nil
	}
	choose := func(i int) tea.Cmd {
		p.cursor[p.tab] = i
		switch {
		case i == nOpts:
			openOther()
			return nil
		case qq.MultiSelect:
			p.chosen[p.tab][i] = !p.chosen[p.tab][i]
			return nil
		}
		return commit(qq.Options[i].Label)
	}
	switch s := k.String(); s {
	case "up", "k":
		p.cursor[p.tab] = (p.cursor[p.tab] + nOpts) % (nOpts + 1)
	case "down", "j":
		p.cursor[p.tab] = (p.cursor[p.tab] + 1) % (nOpts + 1)
	case "tab", "right", "l":
		p.tab, m.qScroll = (p.tab+1)%len(q.Questions), scroll{}
	case "shift+tab", "left", "h":
		p.tab, m.qScroll = (p.tab+len(q.Questions)-1)%len(q.Questions), scroll{}
	case "space":
		return choose(p.cursor[p.tab])
	case "enter":
		c := p.cursor[p.tab]
		if !qq.MultiSelect || c == nOpts {
			return choose(c)
		}
		got := ticked(qq, p.chosen[p.tab])
		if len(got) == 0 {
			m.qNote = "Tick at least one choice (Space), or pick Other."
			return nil
		}
		return commit(ask.Join(got))
	case "esc":
		return send(session.Verdict{Message: "the user declined to answer"})
	default:
		if n, err := strconv.Atoi(s); err == nil && n >= 1 && n <= nOpts+1 {
			return choose(n - 1)
		}
	}
	return nil
}

// ticked returns the labels ticked, in the options' order.
func ticked(q ask.Question, chosen map[int]bool) []string {
	var out []string
	for i, o := range q.Options {
		if chosen[i] {
			out = append(out, o.Label)
		}
	}
	return out
}
