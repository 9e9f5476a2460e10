package tui

import (
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/troupe-dev/troupe/internal/termtext"
)

// entryKind says what a conversation entry shows.
type entryKind int

const (
	entryUser      entryKind = iota // the person's prompt
	entryAssistant                  // the lead's answer (streaming while stream is set)
	entryTool                       // one tool call
	entryMessage                    // a teammate's message to the lead
	entryQuiet                      // a quiet line (idle, joined, an answer given)
	entryNotice                     // a line for the person
	entryError                      // an error in plain words
)

// entry is one item of the conversation.
type entry struct {
	kind      entryKind
	text      string
	who       string // entryMessage, entryQuiet: the teammate
	color     string
	streaming bool // entryAssistant: still arriving

	// entryTool
	id      string
	tool    string // the tool's name
	input   json.RawMessage
	start   time.Time
	done    bool
	failed  bool
	result  string // the result, up to maxResultShown bytes
	outcome string // what it did, briefly (toolOutcome)
	// The time spent waiting for the person's permission, left out of the
	// duration shown: asked is when the open question came.
	waited   time.Duration
	asked    time.Time
	elapsed  time.Duration
	expanded bool

	// rendered lines at width w (valid while w matches and the entry has
	// not changed: every change sets lines to nil)
	lines []string
	w     int
}

// convo is a conversation (the lead's, or a teammate's in its view):
// entries and a scroll position (follow.go). Only the entries on screen
// are rendered, each once per change and width.
type convo struct {
	entries []entry
	width   int
	// top is the first line shown while the person reads back; nil
	// follows the end. New output never moves it.
	top *anchor
	// mark is where the end was when the person scrolled back: what
	// came after it is counted as new.
	mark anchor
	h    int // the height of the last view: a page
	// printed counts the entries printed to the terminal's scrollback
	// (inline.go: without the alternate screen).
	printed int
}

func (c *convo) add(e entry) {
	if n := len(c.entries); e.kind == entryQuiet && n > 0 && c.entries[n-1].kind == entryQuiet && c.entries[n-1].who == e.who && e.who != "" && c.entries[n-1].text == e.text {
		return // the same quiet line again (an idle teammate idle again)
	}
	c.entries = append(c.entries, e)
}

// stream appends a delta to the streaming answer, starting one.
func (c *convo) stream(delta string) {
	if n := len(c.entries); n > 0 && c.entries[n-1].kind == entryAssistant && c.entries[n-1].streaming {
		e := &c.entries[n-1]
		e.text += delta
		e.lines = nil
		return
	}
	c.add(entry{kind: entryAssistant, text: delta, streaming: true})
}

// finish ends the streaming answer with its complete text.
func (c *convo) finish(text string) {
	for i := len(c.entries) - 1; i >= 0; i-- {
		e := &c.entries[i]
		if e.kind == entryAssistant && e.streaming {
			e.streaming, e.lines = false, nil
			if strings.TrimSpace(text) != "" {
				e.text = text
			}
			if strings.TrimSpace(e.text) == "" {
				c.remove(i)
			}
			return
		}
	}
	if strings.TrimSpace(text) != "" {
		c.add(entry{kind: entryAssistant, text: text})
	}
}

// endStream closes a streaming answer cut short.
func (c *convo) endStream() { c.finish("") }

// asking marks the running call q is about (the lead's own, matched by
// tool and input) as waiting for the person since at; answered ends the
// wait, which the duration shown leaves out.
func (c *convo) asking(tool string, input []byte, at time.Time) {
	for i := len(c.entries) - 1; i >= 0; i-- {
		e := &c.entries[i]
		if e.kind == entryTool && !e.done && e.tool == tool && string(e.input) == string(input) {
			e.asked, e.lines = at, nil
			return
		}
	}
}

func (c *convo) answered(tool string, input []byte, at time.Time) {
	for i := len(c.entries) - 1; i >= 0; i-- {
		e := &c.entries[i]
		if e.kind == entryTool && !e.asked.IsZero() && e.tool == tool && string(e.input) == string(input) {
			e.waited += max(0, at.Sub(e.asked))
			e.asked, e.lines = time.Time{}, nil
			return
		}
	}
}

// maxResultShown bounds the result a tool call keeps for Ctrl+O.
const maxResultShown = 8 << 10

// toolDone records a tool call's end.
func (c *convo) toolDone(id string, failed bool, result string, elapsed time.Duration) {
	for i := len(c.entries) - 1; i >= 0; i-- {
		e := &c.entries[i]
		if e.kind == entryTool && e.id == id {
			outcome := toolOutcome(e.tool, e.input, result, failed)
			if len(result) > maxResultShown {
				result = result[:maxResultShown] + "\n…"
			}
			e.done, e.failed, e.result, e.outcome, e.elapsed, e.lines = true, failed, result, outcome, elapsed, nil
			return
		}
	}
}

// toggleLast expands or folds the last tool call.
func (c *convo) toggleLast() {
	for i := len(c.entries) - 1; i >= 0; i-- {
		if c.entries[i].kind == entryTool {
			c.entries[i].expanded = !c.entries[i].expanded
			c.entries[i].lines = nil
			return
		}
	}
}

// render returns entry i's lines, from the cache when it holds.
func (c *convo) render(st styles, i int, now time.Time) []string {
	e := &c.entries[i]
	running := e.kind == entryTool && !e.done
	if e.lines != nil && e.w == c.width && !running {
		return e.lines
	}
	w := max(10, c.width)
	var ls []string
	wrap := func(prefix, text string, style func(string) string) {
		body := ansi.Wrap(text, w-ansi.StringWidth(prefix), " ")
		for j, l := range strings.Split(body, "\n") {
			p := prefix
			if j > 0 {
				p = strings.Repeat(" ", ansi.StringWidth(prefix))
			}
			ls = append(ls, p+style(l))
		}
	}
	switch e.kind {
	case entryUser:
		wrap(st.userPrefix("> "), termtext.Clean(e.text), st.user)
		ls = append(ls, "")
	case entryAssistant:
		ls = append(ls, markdown(st, termtext.Clean(e.text), w)...)
		ls = append(ls, "")
	case entryTool:
		mark, dur := st.dim("⋯"), ""
		switch {
		case e.done && e.failed:
			mark = st.bad("✗")
		case e.done:
			mark = st.good("✓")
		}
		switch {
		case e.done && (e.elapsed > 0 || !e.start.IsZero()):
			dur = " " + st.dim(fmtDur(max(0, e.elapsed-e.waited)))
		case !e.asked.IsZero():
			dur = " " + st.dim("waiting for your answer")
		case !e.start.IsZero():
			dur = " " + st.dim(fmtDur(max(0, now.Sub(e.start)-e.waited)))
		}
		title := termtext.Line(e.text)
		out := ""
		if e.done && e.outcome != "" {
			out = "  ⎿ " + termtext.Line(e.outcome)
		}
		room := w - 2 - ansi.StringWidth(dur)
		if tw := ansi.StringWidth(title); tw+ansi.StringWidth(out) > room {
			// The title keeps at least half the line; the outcome is cut first.
			title = ansi.Truncate(title, max(room/2, room-ansi.StringWidth(out)), "…")
			out = ansi.Truncate(out, max(0, room-ansi.StringWidth(title)), "…")
		}
		if e.failed {
			out = st.bad(out)
		} else {
			out = st.dim(out)
		}
		ls = append(ls, mark+" "+title+out+dur)
		if e.expanded && len(e.input) > 0 { // the input formatted, never as JSON text
			ls = append(ls, inputLines(st, "", e.tool, e.input, w, nil)...)
		}
		if e.done && e.result != "" && e.expanded {
			wrap("  ⎿ ", termtext.Clean(e.result), st.dim)
		}
	case entryMessage:
		wrap(st.name(e.who, e.color)+": ", termtext.Clean(e.text), func(s string) string { return s })
		ls = append(ls, "")
	case entryQuiet:
		text := termtext.Clean(e.text)
		if e.who != "" {
			text = termtext.Line(e.who) + " " + text
		}
		wrap("· ", text, st.dim)
	case entryNotice:
		wrap("※ ", termtext.Clean(e.text), st.warn)
	case entryError:
		text := termtext.Clean(e.text)
		if e.who != "" {
			text = termtext.Line(e.who) + ": " + text
		}
		wrap("⚠ ", text, st.bad)
	}
	if !running {
		e.lines, e.w = ls, c.width
	}
	return ls
}

// markdown renders the lead's answer: headings bold, code blocks
// indented and dim, tables aligned, bullets, numbered items and quotes
// kept with a hanging indent, long lines wrapped.
func markdown(st styles, text string, w int) []string {
	var out []string
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		t := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(t, "```"): // highlight.go; wrapped whole, never cut: a plan to approve may hold code
			lang, _, _ := strings.Cut(strings.TrimSpace(strings.TrimLeft(t, "`")), " ")
			j := i + 1
			for j < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[j]), "```") {
				j++
			}
			out = append(out, codeBlock(st, lang, slices.Clone(lines[i+1:j]), w, j < len(lines))...)
			i = j
			continue
		case strings.HasPrefix(t, "#"):
			out = append(out, st.bold(strings.TrimSpace(strings.TrimLeft(t, "#"))))
			continue
		case strings.HasPrefix(t, "|"):
			j := i
			for j < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[j]), "|") {
				j++
			}
			out = append(out, table(st, lines[i:j], w)...)
			i = j - 1
			continue
		}
		first, indent := "", ""
		switch {
		case strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "* "):
			l, indent = "• "+t[2:], "  "
		case strings.HasPrefix(t, "> "):
			first, l, indent = st.dim("│ "), t[2:], st.dim("│ ")
		default:
			if n := numbered(t); n > 0 {
				l, indent = t, strings.Repeat(" ", n)
			}
		}
		l = inlineMarkdown(st, l)
		for j, wl := range strings.Split(ansi.Wrap(l, w-ansi.StringWidth(indent), " "), "\n") {
			if j > 0 {
				wl = indent + wl
			} else {
				wl = first + wl
			}
			out = append(out, wl)
		}
	}
	return out
}

// numbered returns the width of a numbered item's marker ("12. "), 0
// when t is not one.
func numbered(t string) int {
	i := 0
	for i < len(t) && i < 4 && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 || !strings.HasPrefix(t[i:], ". ") {
		return 0
	}
	return i + 2
}

// table renders the rows of a Markdown table aligned in columns, the
// header bold and the separator row a rule; a table wider than w has its
// widest columns cut.
func table(st styles, rows []string, w int) []string {
	var cells [][]string
	header := -1
	for _, r := range rows {
		r = strings.TrimSpace(r)
		r = strings.TrimSuffix(strings.TrimPrefix(r, "|"), "|")
		cs := strings.Split(r, "|")
		sep := true
		for k := range cs {
			cs[k] = strings.TrimSpace(cs[k])
			if strings.Trim(cs[k], ":-") != "" || cs[k] == "" {
				sep = false
			}
		}
		if sep && len(cells) == 1 {
			header = 0
			continue
		}
		cells = append(cells, cs)
	}
	cols := 0
	for _, r := range cells {
		cols = max(cols, len(r))
	}
	width := make([]int, cols)
	for _, r := range cells {
		for k, c := range r {
			width[k] = max(width[k], ansi.StringWidth(plainInline(c)))
		}
	}
	// Cut the widest column until the table fits (3 columns of padding
	// and rule per cell).
	for total(width)+3*cols+1 > w {
		k := widest(width)
		if width[k] <= 3 {
			break
		}
		width[k]--
	}
	var out []string
	for n, r := range cells {
		var b strings.Builder
		b.WriteString(st.dim("│"))
		for k := range cols {
			c := ""
			if k < len(r) {
				c = plainInline(r[k])
			}
			c = ansi.Truncate(c, width[k], "…")
			pad := strings.Repeat(" ", width[k]-ansi.StringWidth(c))
			if n == header {
				c = st.bold(c)
			}
			b.WriteString(" " + c + pad + " " + st.dim("│"))
		}
		out = append(out, b.String())
		if n == header {
			var rule strings.Builder
			rule.WriteString("├")
			for k := range cols {
				rule.WriteString(strings.Repeat("─", width[k]+2))
				if k < cols-1 {
					rule.WriteString("┼")
				}
			}
			rule.WriteString("┤")
			out = append(out, st.dim(rule.String()))
		}
	}
	return out
}

func total(ws []int) int {
	n := 0
	for _, w := range ws {
		n += w
	}
	return n
}

func widest(ws []int) int {
	k := 0
	for i, w := range ws {
		if w > ws[k] {
			k = i
		}
	}
	return k
}

// plainInline drops the Markdown marks of a table cell (**, `) and writes
// a link as its text.
func plainInline(c string) string {
	c = strings.NewReplacer("**", "", "`", "").Replace(c)
	return links(c, func(text, _ string) string { return text })
}

// links rewrites each [text](url) in l with f.
func links(l string, f func(text, url string) string) string {
	var b strings.Builder
	for {
		i := strings.Index(l, "[")
		if i < 0 {
			break
		}
		j := strings.Index(l[i:], "](")
		if j < 0 {
			break
		}
		k := strings.Index(l[i+j:], ")")
		if k < 0 {
			break
		}
		text, url := l[i+1:i+j], l[i+j+2:i+j+k]
		if strings.ContainsAny(url, " \t") || strings.Contains(text, "[") {
			b.WriteString(l[:i+1])
			l = l[i+1:]
			continue
		}
		b.WriteString(l[:i])
		b.WriteString(f(text, url))
		l = l[i+j+k+1:]
	}
	b.WriteString(l)
	return b.String()
}

// inlineMarkdown styles **bold** and `code` spans, and writes a link as
// its text with the address after it, dim ("docs (https://…)"), or the
// address alone when it is the text.
func inlineMarkdown(st styles, l string) string {
	l = links(l, func(text, url string) string {
		if text == url || text == "" {
			return url
		}
		return text + " " + st.dim("("+url+")")
	})
	var b strings.Builder
	for {
		i := strings.IndexAny(l, "*`")
		if i < 0 {
			b.WriteString(l)
			return b.String()
		}
		delim := "`"
		if l[i] == '*' {
			if !strings.HasPrefix(l[i:], "**") {
				b.WriteString(l[:i+1])
				l = l[i+1:]
				continue
			}
			delim = "**"
		}
		j := strings.Index(l[i+len(delim):], delim)
		if j < 0 {
			b.WriteString(l)
			return b.String()
		}
		inner := l[i+len(delim) : i+len(delim)+j]
		b.WriteString(l[:i])
		if delim == "`" {
			b.WriteString(st.code(inner))
		} else {
			b.WriteString(st.bold(inner))
		}
		l = l[i+2*len(delim)+j:]
	}
}

func fmtDur(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}
