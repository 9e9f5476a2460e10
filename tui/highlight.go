package tui

import (
	"strings"
	"sync"

	"charm.land/lipgloss/v2"
	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/charmbracelet/x/ansi"
)

// A fenced code block in the lead's answer (markdown) is shown under a
// label naming its language, each line indented and wrapped whole with
// a continuation mark (never cut), and, in color, highlighted by
// chroma's lexer for the language. Highlighting a block is done once per
// block and width (hlCache): an answer is rendered again on every
// streamed delta, and a frame must stay cheap.

// segment is a piece of a code line and the kind of token it is.
type segment struct {
	text string
	kind chroma.TokenType
}

var (
	hlMu    sync.Mutex
	hlCache = map[hlKey][]string{}
)

type hlKey struct {
	lang, code string
	w          int
}

// hlCacheMax bounds the cache; past it, the cache starts over.
const hlCacheMax = 512

// codeBlock renders the lines of a code block in language lang at width
// w. An open block (its closing fence not streamed yet) is not
// highlighted: it changes with every delta.
func codeBlock(st styles, lang string, code []string, w int, closed bool) []string {
	for i, l := range code {
		code[i] = strings.ReplaceAll(l, "\t", "    ")
	}
	var out []string
	if lang != "" {
		out = append(out, st.dim("  ── "+lang))
	}
	var lexer chroma.Lexer
	if !st.plain && closed && lang != "" {
		lexer = lexers.Get(lang)
	}
	if lexer == nil {
		for _, l := range code {
			out = append(out, wrapped("  ", l, w, st.code)...)
		}
		return out
	}
	key := hlKey{lang: lang, code: strings.Join(code, "\n"), w: w}
	hlMu.Lock()
	lines, ok := hlCache[key]
	hlMu.Unlock()
	if !ok {
		lines = highlight(lexer, key.code, len(code), w)
		hlMu.Lock()
		if len(hlCache) >= hlCacheMax {
			clear(hlCache)
		}
		hlCache[key] = lines
		hlMu.Unlock()
	}
	return append(out, lines...)
}

// highlight lexes code (n lines) and lays it out in colors at width w.
func highlight(lexer chroma.Lexer, code string, n, w int) []string {
	segs := make([][]segment, 1, n)
	if it, err := chroma.Coalesce(lexer).Tokenise(nil, code); err == nil {
		for tok := it(); tok != chroma.EOF; tok = it() {
			for j, piece := range strings.Split(tok.Value, "\n") {
				if j > 0 {
					segs = append(segs, nil)
				}
				if piece != "" {
					k := len(segs) - 1
					segs[k] = append(segs[k], segment{piece, tok.Type})
				}
			}
		}
	}
	var out []string
	for i := range n {
		var line []segment
		if i < len(segs) {
			line = segs[i]
		}
		out = append(out, paint(line, w)...)
	}
	return out
}

// paint wraps one highlighted line to w, as wrapped does, coloring each
// wrapped piece by the segments it holds.
func paint(line []segment, w int) []string {
	var plain strings.Builder
	for _, s := range line {
		plain.WriteString(s.text)
	}
	pieces := strings.Split(ansi.Hardwrap(plain.String(), max(1, w-2), true), "\n")
	var out []string
	si, off := 0, 0 // the segment, and the bytes of it used
	for i, piece := range pieces {
		var b strings.Builder
		if i == 0 {
			b.WriteString("  ")
		} else {
			b.WriteString("↪ ")
		}
		for rest := piece; rest != "" && si < len(line); {
			s := line[si]
			take := min(len(s.text)-off, len(rest))
			if !strings.HasPrefix(s.text[off:], rest[:take]) {
				// The wrap changed the text (it should not): plain.
				return wrapped("  ", plain.String(), w, func(t string) string { return t })
			}
			b.WriteString(tokenStyle(s.kind, rest[:take]))
			rest, off = rest[take:], off+take
			if off == len(s.text) {
				si, off = si+1, 0
			}
		}
		out = append(out, b.String())
	}
	return out
}

var (
	hlKeyword  = lipgloss.NewStyle().Foreground(lipgloss.Color("5"))
	hlString   = lipgloss.NewStyle().Foreground(lipgloss.Color("2"))
	hlNumber   = lipgloss.NewStyle().Foreground(lipgloss.Color("3"))
	hlFunction = lipgloss.NewStyle().Foreground(lipgloss.Color("4"))
	hlType     = lipgloss.NewStyle().Foreground(lipgloss.Color("6"))
	hlDeleted  = lipgloss.NewStyle().Foreground(lipgloss.Color("1"))
)

// tokenStyle colors text as a token of kind t is shown.
func tokenStyle(t chroma.TokenType, text string) string {
	var s *lipgloss.Style
	switch {
	case t.InCategory(chroma.Comment):
		s = &styleDim
	case t == chroma.KeywordType || t == chroma.NameBuiltin || t == chroma.NameClass:
		s = &hlType
	case t.InCategory(chroma.Keyword):
		s = &hlKeyword
	case t.InSubCategory(chroma.LiteralString):
		s = &hlString
	case t.InSubCategory(chroma.LiteralNumber):
		s = &hlNumber
	case t == chroma.NameFunction || t == chroma.NameFunctionMagic:
		s = &hlFunction
	case t == chroma.GenericInserted:
		s = &hlString
	case t == chroma.GenericDeleted:
		s = &hlDeleted
	default:
		return text
	}
	return s.Render(text)
}
