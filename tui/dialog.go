package tui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/troupe-dev/troupe/internal/termtext"
)

// scroll is a dialog body's scroll state: the first body line shown, the
// lines a page moves, and whether the body's last line has been on
// screen (answers that allow wait for it).
type scroll struct {
	off   int
	page  int
	below int // body lines below the view at the last layout
	seen  bool
}

// box lays a dialog out in at most h lines: head on top, the body
// scrolled to sc.off, foot (the answers) always at the bottom. When the
// body does not fit, a line above and below it says how many lines are
// out of view and which keys scroll. Head lines go first when h is
// small; foot lines are never dropped. Every line is at most w cells
// (the caller wraps, never box).
func (m *model) box(head, body, foot []string, h int, sc *scroll) []string {
	room := h - len(head) - len(foot)
	for room < 3 && len(head) > 0 && len(body) > room {
		head, room = head[1:], room+1
	}
	out := append([]string(nil), head...)
	if len(body) <= room {
		sc.off, sc.page, sc.below, sc.seen = 0, max(1, len(body)), 0, true
		out = append(out, body...)
		return append(out, foot...)
	}
	view := max(1, room-2)
	sc.page = view
	sc.off = min(max(0, sc.off), len(body)-view)
	above, below := sc.off, len(body)-view-sc.off
	sc.below = below
	if below == 0 {
		sc.seen = true
	}
	if above > 0 {
		out = append(out, m.st.warn(fmt.Sprintf("↑ %s above (↑/k, PgUp, Home)", plural(above, "more line"))))
	} else {
		out = append(out, m.st.dim(fmt.Sprintf("top of %d lines (↓/j, PgDn scroll)", len(body))))
	}
	out = append(out, body[sc.off:sc.off+view]...)
	if below > 0 {
		out = append(out, m.st.warn(fmt.Sprintf("↓ %s below (↓/j, PgDn, End)", plural(below, "more line"))))
	} else {
		out = append(out, m.st.dim(fmt.Sprintf("end of %d lines", len(body))))
	}
	return append(out, foot...)
}

// scrollKey moves sc for a scrolling key; it reports whether k is one.
// j and k scroll only when typing is off (a feedback prompt takes them).
func scrollKey(sc *scroll, k string, typing bool) bool {
	page := max(1, sc.page)
	switch k {
	case "pgup":
		sc.off -= page
	case "pgdown":
		sc.off += page
	case "up", "k":
		if typing {
			return false
		}
		sc.off--
	case "down", "j", "space":
		if typing {
			return false
		}
		sc.off++
	case "home":
		sc.off = 0
	case "end":
		sc.off = 1 << 30 // box clamps it
	default:
		return false
	}
	sc.off = max(0, sc.off)
	return true
}

// wrapped hard-wraps one line of text to w cells, keeping every
// character (spaces too): the first piece after first, the others after
// a "↪ " mark, both padded to the same width.
func wrapped(first, text string, w int, style func(string) string) []string {
	pw := ansi.StringWidth(first)
	cont := strings.Repeat(" ", max(0, pw-2)) + "↪ "
	if pw < 2 {
		cont = "↪ "
		pw = 2
	}
	var out []string
	for i, piece := range strings.Split(ansi.Hardwrap(text, max(1, w-pw), true), "\n") {
		p := first
		if i > 0 {
			p = cont
		}
		out = append(out, p+style(piece))
	}
	return out
}

// textLines sanitizes text (termtext) and lays each of its lines out
// whole, tabs as four spaces, wrapped to w: prefix on the first line,
// rest on the next ones.
func textLines(prefix, rest, text string, w int, style func(string) string) []string {
	var out []string
	for i, l := range strings.Split(termtext.Clean(text), "\n") {
		p := rest
		if i == 0 {
			p = prefix
		}
		out = append(out, wrapped(p, strings.ReplaceAll(l, "\t", "    "), w, style)...)
	}
	return out
}

func plain(s string) string { return s }

// questionDialog is the dialog of the first question in at most h
// lines, and the line of its feedback prompt (-1 when it shows none).
func (m *model) questionDialog(h int) ([]string, int) {
	q := m.questions[0]
	if q.ID != m.qFor {
		m.qFor, m.qScroll, m.qNote = q.ID, scroll{}, ""
	}
	who := m.st.name(q.Agent, q.Color)
	more := ""
	if len(m.questions) > 1 {
		more = m.st.dim(fmt.Sprintf(" (%d more waiting)", len(m.questions)-1))
	}
	w := m.width
	head := []string{m.st.dim(strings.Repeat("─", w))}
	var body, keys []string
	if q.Plan != "" {
		head = append(head, who+" asks you to approve its plan"+more+":")
		for _, l := range markdown(m.st, termtext.Clean(q.Plan), w-2) {
			body = append(body, "  "+l)
		}
		keys = []string{fmt.Sprintf("%s approve · %s send back, say why · %s send back", m.st.accent("1"), m.st.accent("3"), m.st.accent("Esc"))}
	} else {
		head = append(head, who+" asks"+more+": "+m.st.bold(termtext.Line(q.Tool)))
		body = m.callLines(q.Tool, q.Input)
		if q.Reason != "" {
			body = append(body, textLines("why: ", "     ", q.Reason, w, m.st.dim)...)
		}
		if q.Always != "" {
			scope := ""
			if q.Teammate {
				scope = ", for the whole team"
			}
			body = append(body, textLines("2 always adds the rule ", "  ", termtext.Line(q.Always)+scope, w, m.st.bold)...)
		} else {
			body = append(body, m.st.dim("2 always is not offered: no rule names exactly this call"))
		}
		always := m.st.accent("2") + " always · "
		if q.Always == "" {
			always = ""
		}
		keys = []string{fmt.Sprintf("%s once · %s%s deny, say why · %s deny",
			m.st.accent("1"), always, m.st.accent("3"), m.st.accent("Esc"))}
	}
	if m.qNote != "" {
		keys = append([]string{m.st.warn(m.qNote)}, keys...)
	}
	at := -1
	if m.feedback {
		what := "Deny, and tell " + termtext.Line(q.Agent) + " what to do instead (Enter sends, Esc back):"
		if q.Plan != "" {
			what = "Send it back, and tell " + termtext.Line(q.Agent) + " what to change (Enter sends, Esc back):"
		}
		keys = append(wrapped("", what, w, plain), strings.Split(m.input.View(), "\n")...)
		at = len(keys) - m.input.Height()
	} else {
		var ks []string
		for _, k := range keys {
			ks = append(ks, strings.Split(ansi.Wrap(k, w, " "), "\n")...)
		}
		keys = ks
	}
	out := m.box(head, body, keys, h, &m.qScroll)
	if at >= 0 {
		at += len(out) - len(keys)
	}
	return out, at
}

// callLines shows a tool call's input whole: the command with its lines
// and indentation, an edit's old and new text, a write's content, any
// other tool's input as indented JSON; wrapped to the screen, never cut,
// and drawn through the terminal-text sanitizer.
func (m *model) callLines(tool string, input json.RawMessage) []string {
	var in map[string]any
	_ = json.Unmarshal(input, &in)
	str := func(k string) string { s, _ := in[k].(string); return s }
	w := m.width
	var out []string
	switch tool {
	case "Bash":
		out = textLines("  $ ", "    ", str("command"), w, plain)
		if d := str("description"); d != "" {
			out = append(out, textLines("  description: ", "  ", d, w, m.st.dim)...)
		}
		if bg, _ := in["run_in_background"].(bool); bg {
			out = append(out, m.st.dim("  runs in the background"))
		}
	case "Edit":
		out = textLines("  ", "  ", str("file_path"), w, plain)
		out = append(out, textLines("  - ", "  - ", str("old_string"), w, m.st.bad)...)
		out = append(out, textLines("  + ", "  + ", str("new_string"), w, m.st.good)...)
	case "Write":
		out = textLines("  ", "  ", str("file_path")+" (new content)", w, plain)
		out = append(out, textLines("  + ", "  + ", str("content"), w, m.st.good)...)
	case "NotebookEdit":
		mode := str("edit_mode")
		if mode == "" {
			mode = "replace"
		}
		head := str("notebook_path") + ": " + mode + " cell " + str("cell_id")
		if t := str("cell_type"); t != "" {
			head += " (" + t + ")"
		}
		out = textLines("  ", "  ", head, w, plain)
		if mode != "delete" {
			out = append(out, textLines("  + ", "  + ", str("new_source"), w, m.st.good)...)
		}
	case "EnterPlanMode":
		out = textLines("  ", "  ", "switch the session to plan mode: read-only until you approve a plan", w, plain)
	case "EnterWorktree":
		branch := "worktree/" + str("name")
		if str("name") == "" {
			branch = "a new worktree/ branch"
		}
		out = textLines("  ", "  ", "move the session into a new git worktree on "+branch, w, plain)
	case "ExitWorktree":
		what := "leave the worktree, keeping it and its branch"
		if str("action") == "remove" {
			what = "leave the worktree and remove it with its branch"
			if d, _ := in["discard_changes"].(bool); d {
				what += ", DISCARDING uncommitted changes and unmerged commits"
			}
		}
		out = textLines("  ", "  ", what, w, plain)
	default:
		var b bytes.Buffer
		if json.Indent(&b, input, "", "  ") != nil {
			b.Reset()
			b.Write(input)
		}
		out = textLines("  ", "  ", b.String(), w, plain)
	}
	return out
}

// dialogKey handles the keys that scroll the open question's dialog; it
// reports whether k was one.
func (m *model) dialogKey(k tea.KeyPressMsg) bool {
	if !scrollKey(&m.qScroll, k.String(), m.feedback) {
		return false
	}
	m.qNote = ""
	return true
}

// unseen lays the open dialog out at the screen's size and returns how
// many of its body lines are below the view when its end has never been
// on screen: an answer that allows waits until none is.
func (m *model) unseen() int {
	m.bottom()
	if m.qScroll.seen {
		return 0
	}
	return max(1, m.qScroll.below)
}
