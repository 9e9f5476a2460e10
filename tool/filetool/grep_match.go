package filetool

import (
	"bytes"
	"regexp"
	"regexp/syntax"
	"sort"
)

// matcher finds the lines of a file that a Grep pattern matches. It runs
// over the whole content at once and looks at line boundaries only around
// what it finds: a literal every match contains is searched for first
// (bytes.Index), and the regular expression runs only on the lines that
// hold it. It is safe for concurrent use.
//
// The lines it reports are those of the line-by-line definition: the
// content split at "\n" (a last empty piece dropped), each line without a
// trailing "\r"; in line mode the pattern is matched against each line on
// its own, in multiline mode against the whole content, and a line counts
// when a match touches it.
type matcher struct {
	re        *regexp.Regexp // the pattern: per line, or over the whole content in multiline mode
	multiline bool
	lit       *literal // in every match; nil if none is known
	// scan, in line mode, is the pattern with ^ and $ matching at line
	// boundaries, run over the whole content to find the next line that
	// may match; nil when that cannot be done (\A or \z in the pattern).
	scan *regexp.Regexp
	// scanCR is true when scan's $ would miss a line ending in "\r\n":
	// scan is then not used on content holding a "\r".
	scanCR bool
}

// newMatcher compiles a matcher for the Grep pattern with the given
// flags ("i", "sm" or both); the error is the regular expression's.
func newMatcher(pattern, flags string, multiline bool) (*matcher, error) {
	expr := pattern
	if flags != "" {
		expr = "(?" + flags + ")" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, err
	}
	m := &matcher{re: re, multiline: multiline}
	if tree, err := syntax.Parse(expr, syntax.Perl); err == nil {
		m.lit = requiredLiteral(tree.Simplify())
	}
	if multiline {
		return m, nil
	}
	scanExpr := "(?m" + flags + ")" + pattern
	tree, err := syntax.Parse(scanExpr, syntax.Perl)
	if err != nil {
		return m, nil
	}
	var textAnchor, endLine bool
	walkSyntax(tree, func(re *syntax.Regexp) {
		switch re.Op {
		case syntax.OpBeginText, syntax.OpEndText:
			textAnchor = true
		case syntax.OpEndLine:
			endLine = true
		}
	})
	if textAnchor {
		return m, nil
	}
	if scan, err := regexp.Compile(scanExpr); err == nil {
		m.scan, m.scanCR = scan, endLine
	}
	return m, nil
}

// walkSyntax calls fn for re and every node below it.
func walkSyntax(re *syntax.Regexp, fn func(*syntax.Regexp)) {
	fn(re)
	for _, sub := range re.Sub {
		walkSyntax(sub, fn)
	}
}

// find returns the offsets of the starts of the matched lines of content,
// ascending; firstOnly stops at the first. In multiline mode it returns
// every line a match touches.
func (m *matcher) find(content []byte, firstOnly bool, out []int) []int {
	if m.lit != nil && m.lit.index(content) < 0 {
		return out
	}
	if m.multiline {
		return m.findMultiline(content, firstOnly, out)
	}
	scan := m.scan
	if scan != nil && m.scanCR && bytes.IndexByte(content, '\r') >= 0 {
		scan = nil
	}
	for pos := 0; pos < len(content); {
		var cand, end int // a candidate position, and its match's end (scan only)
		switch {
		case m.lit != nil:
			i := m.lit.index(content[pos:])
			if i < 0 {
				return out
			}
			cand, end = pos+i, -1
		case scan != nil:
			loc := scan.FindIndex(content[pos:])
			if loc == nil {
				return out
			}
			cand, end = pos+loc[0], pos+loc[1]
		default:
			cand, end = pos, -1
		}
		start := pos
		if cand > pos {
			start = bytes.LastIndexByte(content[pos:cand], '\n') + 1 + pos
		}
		if start >= len(content) {
			return out // past the last line: content ends with "\n"
		}
		next := len(content)
		lineEnd := next
		if i := bytes.IndexByte(content[cand:], '\n'); i >= 0 {
			lineEnd, next = cand+i, cand+i+1
		}
		line := content[start:lineEnd]
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		// A scan match within the line is a match of the line; one that
		// runs past it needs a look at the line alone.
		if (end >= 0 && end <= start+len(line)) || m.re.Match(line) {
			out = append(out, start)
			if firstOnly {
				return out
			}
		}
		pos = next
	}
	return out
}

// findMultiline is find in multiline mode.
func (m *matcher) findMultiline(content []byte, firstOnly bool, out []int) []int {
	locs := m.re.FindAllIndex(content, -1)
	if len(locs) == 0 || len(content) == 0 {
		return out
	}
	starts := lineStarts(content)
	lineOf := func(pos int) int {
		return sort.Search(len(starts), func(i int) bool { return starts[i] > pos }) - 1
	}
	last := -1
	for _, loc := range locs {
		from, to := lineOf(loc[0]), lineOf(max(loc[1]-1, loc[0]))
		for l := max(from, last+1); l <= to; l++ {
			out = append(out, starts[l])
			last = l
		}
		if firstOnly && last >= 0 {
			return out
		}
	}
	return out
}

// lineStarts returns the offsets where the lines of content start.
func lineStarts(content []byte) []int {
	starts := make([]int, 0, 64)
	for pos := 0; pos < len(content); {
		starts = append(starts, pos)
		i := bytes.IndexByte(content[pos:], '\n')
		if i < 0 {
			break
		}
		pos += i + 1
	}
	return starts
}
