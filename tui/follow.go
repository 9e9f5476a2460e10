package tui

import (
	"fmt"
	"time"
)

// anchor is a line of a conversation: line of entries[entry].
type anchor struct{ entry, line int }

// follow shows the end again: new output scrolls the view.
func (c *convo) follow() { c.top = nil }

// remove deletes entry i, keeping the view and the new-line count where
// they are.
func (c *convo) remove(i int) {
	c.entries = append(c.entries[:i], c.entries[i+1:]...)
	if c.top != nil && c.top.entry > i {
		c.top.entry--
	}
	if c.mark.entry > i {
		c.mark.entry--
	}
}

// drop forgets the n oldest entries (a bounded view), keeping the view
// on the same lines.
func (c *convo) drop(n int) {
	n = min(n, len(c.entries))
	c.entries = append(c.entries[:0], c.entries[n:]...)
	if c.top != nil {
		if c.top.entry -= n; c.top.entry < 0 {
			*c.top = anchor{}
		}
	}
	c.mark.entry = max(0, c.mark.entry-n)
	c.printed = max(0, c.printed-n)
}

// clear forgets every entry.
func (c *convo) clear() { c.entries, c.top, c.mark, c.printed = nil, nil, anchor{}, 0 }

// view returns height lines: the end of the conversation when it follows,
// else the lines from c.top on, the last of them a marker saying how many
// new lines came since the person scrolled back.
func (c *convo) view(st styles, height int, now time.Time) []string {
	if height <= 0 {
		return nil
	}
	c.h = height
	if c.top == nil {
		out, _ := c.tail(st, height, now)
		return out
	}
	c.top.entry = min(c.top.entry, len(c.entries))
	out := make([]string, 0, height+1)
	for i := c.top.entry; i < len(c.entries) && len(out) <= height; i++ {
		ls := c.render(st, i, now)
		if i == c.top.entry {
			ls = ls[min(c.top.line, len(ls)):]
		}
		out = append(out, ls...)
	}
	if len(out) <= height { // the rest fits: follow the end again
		c.top = nil
		out, _ := c.tail(st, height, now)
		return out
	}
	out = out[:height-1]
	if n := c.newLines(st, now); n > 0 {
		out = append(out, st.warn(fmt.Sprintf("↓ %s, End to follow", plural(n, "new line"))))
	} else {
		out = append(out, st.dim("↓ more below, End to follow"))
	}
	return out
}

// tail returns the last height lines and the anchor of the first.
func (c *convo) tail(st styles, height int, now time.Time) ([]string, anchor) {
	var rev [][]string // rendered entries, newest first
	got, i := 0, len(c.entries)-1
	for ; i >= 0 && got < height; i-- {
		ls := c.render(st, i, now)
		rev = append(rev, ls)
		got += len(ls)
	}
	all := make([]string, 0, max(got, height))
	for j := len(rev) - 1; j >= 0; j-- {
		all = append(all, rev[j]...)
	}
	start := max(0, len(all)-height)
	top := anchor{entry: i + 1, line: start}
	out := all[start:]
	for len(out) < height {
		out = append([]string{""}, out...)
	}
	return out, top
}

// end is the anchor just past the last line now.
func (c *convo) end(st styles, now time.Time) anchor {
	n := len(c.entries)
	if n == 0 {
		return anchor{}
	}
	return anchor{entry: n - 1, line: len(c.render(st, n-1, now))}
}

// newLines counts the lines after c.mark.
func (c *convo) newLines(st styles, now time.Time) int {
	n := 0
	for i := min(c.mark.entry, len(c.entries)); i < len(c.entries); i++ {
		l := len(c.render(st, i, now))
		if i == c.mark.entry {
			l = max(0, l-c.mark.line)
		}
		n += l
	}
	return n
}

// scroll moves the view n lines up (n < 0: down). Scrolling up from the
// end holds the view there: new output no longer moves it.
func (c *convo) scroll(st styles, n int, now time.Time) {
	if len(c.entries) == 0 {
		c.top = nil
		return
	}
	if c.top == nil {
		if n <= 0 {
			return
		}
		_, a := c.tail(st, max(1, c.h), now)
		c.top, c.mark = &a, c.end(st, now)
	}
	a := *c.top
	a.entry = min(a.entry, len(c.entries)-1)
	for ; n > 0; a.entry-- { // up
		if a.line >= n {
			a.line -= n
			break
		}
		n -= a.line
		if a.entry == 0 {
			a.line = 0
			break
		}
		a.line = len(c.render(st, a.entry-1, now))
	}
	for n < 0 && a.entry < len(c.entries) { // down; view follows at the end
		l := len(c.render(st, a.entry, now))
		if a.line-n < l {
			a.line -= n
			break
		}
		n += l - a.line
		a.entry, a.line = a.entry+1, 0
	}
	c.top = &a
}

// home shows the conversation's first line.
func (c *convo) home(st styles, now time.Time) {
	if c.top == nil {
		c.mark = c.end(st, now)
	}
	c.top = &anchor{}
}

// pageKey scrolls c for PgUp/PgDn and Ctrl+Home/End; while the view is
// scrolled back and the prompt is empty, also for Home/End, and for g/G
// when letters allows (else they edit or type). It reports whether k was
// one.
func (m *model) pageKey(c *convo, k string, letters bool) bool {
	switch k {
	case "home", "end":
		if c.top == nil || m.input.Value() != "" {
			return false
		}
		k = "ctrl+" + k
	}
	switch k {
	case "pgup", "pgdown", "ctrl+home", "ctrl+end", "g", "G":
		m.frame() // lays the view out: c.h is its height now
	default:
		return false
	}
	page := max(1, c.h-2)
	switch k {
	case "pgup":
		c.scroll(m.st, page, m.now)
	case "pgdown":
		c.scroll(m.st, -page, m.now)
	case "ctrl+home":
		c.home(m.st, m.now)
	case "ctrl+end":
		c.follow()
	case "g", "G":
		if !letters || c.top == nil || m.input.Value() != "" {
			return false
		}
		if k == "g" {
			c.home(m.st, m.now)
		} else {
			c.follow()
		}
	default:
		return false
	}
	return true
}
