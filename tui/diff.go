package tui

import (
	"fmt"
	"strings"
)

// diffLine is one line of a line diff: op ' ' (kept), '-' (removed) or
// '+' (added), and its number in the old or the new text (1-based).
type diffLine struct {
	op   byte
	num  int // the old number for ' ' and '-', the new one for '+'
	text string
}

// maxDiffCells bounds the table of the longest-common-subsequence
// diff; past it the changed middle shows as all removed, then all added.
const maxDiffCells = 4 << 20

// lineDiff returns the lines of a and b as a diff: the common head and
// tail kept, the middle aligned by the longest common subsequence.
func lineDiff(a, b []string) []diffLine {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	out := make([]diffLine, 0, len(a)+len(b)-pre-suf)
	for i := range pre {
		out = append(out, diffLine{' ', i + 1, a[i]})
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	if len(ma)*len(mb) > maxDiffCells {
		for i, l := range ma {
			out = append(out, diffLine{'-', pre + i + 1, l})
		}
		for i, l := range mb {
			out = append(out, diffLine{'+', pre + i + 1, l})
		}
	} else {
		// lcs[i][j]: the common subsequence of ma[i:] and mb[j:].
		w := len(mb) + 1
		lcs := make([]int32, (len(ma)+1)*w)
		for i := len(ma) - 1; i >= 0; i-- {
			for j := len(mb) - 1; j >= 0; j-- {
				if ma[i] == mb[j] {
					lcs[i*w+j] = lcs[(i+1)*w+j+1] + 1
				} else {
					lcs[i*w+j] = max(lcs[(i+1)*w+j], lcs[i*w+j+1])
				}
			}
		}
		i, j := 0, 0
		for i < len(ma) || j < len(mb) {
			switch {
			case i < len(ma) && j < len(mb) && ma[i] == mb[j]:
				out = append(out, diffLine{' ', pre + i + 1, ma[i]})
				i, j = i+1, j+1
			case i < len(ma) && (j == len(mb) || lcs[(i+1)*w+j] >= lcs[i*w+j+1]):
				out = append(out, diffLine{'-', pre + i + 1, ma[i]}) // removals first
				i++
			default:
				out = append(out, diffLine{'+', pre + j + 1, mb[j]})
				j++
			}
		}
	}
	for k := range suf {
		out = append(out, diffLine{' ', len(a) - suf + k + 1, a[len(a)-suf+k]})
	}
	return out
}

// diffCounts returns how many lines d adds and removes.
func diffCounts(d []diffLine) (add, del int) {
	for _, l := range d {
		switch l.op {
		case '+':
			add++
		case '-':
			del++
		}
	}
	return add, del
}

// unified keeps the changed lines of d and ctx kept lines around each
// change; a "⋯" line stands for kept lines left out between two hunks.
func unified(d []diffLine, ctx int) []diffLine {
	keep := make([]bool, len(d))
	for i, l := range d {
		if l.op == ' ' {
			continue
		}
		for k := max(0, i-ctx); k <= min(len(d)-1, i+ctx); k++ {
			keep[k] = true
		}
	}
	var out []diffLine
	gap := false
	for i, l := range d {
		if !keep[i] {
			gap = true
			continue
		}
		if gap && len(out) > 0 {
			out = append(out, diffLine{op: '~'})
		}
		gap = false
		out = append(out, l)
	}
	return out
}

// diffLines lays a unified diff out w cells wide: each line with its
// number, its mark and its text, wrapped (never cut) and sanitized.
func diffLines(st styles, d []diffLine, w int, numbers bool) []string {
	width := 1
	for _, l := range d {
		width = max(width, len(fmt.Sprint(l.num)))
	}
	var out []string
	for _, l := range d {
		if l.op == '~' {
			out = append(out, st.dim("  "+strings.Repeat(" ", width)+" ⋯"))
			continue
		}
		style := plain
		switch l.op {
		case '-':
			style = st.bad
		case '+':
			style = st.good
		}
		prefix := "  " + string(l.op) + " "
		if numbers {
			prefix = fmt.Sprintf("  %*d %c ", width, l.num, l.op)
		}
		out = append(out, textLines(prefix, strings.Repeat(" ", len(prefix)), l.text, w, style)...)
	}
	return out
}

// splitLines splits text into lines; a final newline adds no line.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
