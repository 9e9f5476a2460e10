package filetool

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// maxPatternLen bounds a glob or ignore pattern; longer ones are refused
// (a compiled RE2 program grows with the pattern).
const maxPatternLen = 4096

// globSyntax chooses the dialect globRegexp translates.
type globSyntax int

const (
	// doublestar: `*`, `?`, `[...]`, `**` segments and `{a,b}` braces, as
	// in Glob patterns and Grep's glob filter.
	doublestar globSyntax = iota
	// gitignore: like doublestar but braces are ordinary characters, as
	// in git's wildmatch.
	gitignore
)

// globRegexp translates a slash-separated glob into the body of an RE2
// expression (without anchors) that matches slash-separated paths:
//
//   - `*` matches any run of characters except `/`, `?` one character
//     except `/`;
//   - `[abc]`, `[a-z]`, `[!x]`, `[^x]` and `[[:alpha:]]` match one character
//     (never `/`); a `[` without its `]` is an ordinary character;
//   - `**` as a whole path segment matches zero or more segments: `**/x`
//     matches x at any depth, `a/**/b` matches a/b and a/x/y/b, a trailing
//     `/**` matches everything below; elsewhere `**` is `*`;
//   - `\` makes the next character ordinary;
//   - with the doublestar syntax, `{a,b}` matches a or b (nestable).
func globRegexp(pat string, syntax globSyntax) (string, error) {
	if len(pat) > maxPatternLen {
		return "", fmt.Errorf("pattern longer than %d bytes", maxPatternLen)
	}
	var b strings.Builder
	depth := 0 // open braces
	// atSegStart reports whether position i begins a path segment (or a
	// brace alternative, which begins one when the brace does).
	segStart := func(i int) bool {
		if i == 0 {
			return true
		}
		switch pat[i-1] {
		case '/':
			return true
		case '{', ',':
			return syntax == doublestar && depth > 0
		}
		return false
	}
	for i := 0; i < len(pat); {
		c := pat[i]
		switch {
		case c == '*':
			j := i
			for j < len(pat) && pat[j] == '*' {
				j++
			}
			segEnd := j == len(pat) || pat[j] == '/' ||
				(syntax == doublestar && depth > 0 && (pat[j] == ',' || pat[j] == '}'))
			if j-i >= 2 && segStart(i) && segEnd {
				if j < len(pat) && pat[j] == '/' {
					b.WriteString(`(?:.*/)?`) // "**/": zero or more segments
					i = j + 1
				} else {
					b.WriteString(`.*`) // trailing "**": everything below
					i = j
				}
				continue
			}
			b.WriteString(`[^/]*`)
			i = j
		case c == '?':
			b.WriteString(`[^/]`)
			i++
		case c == '[':
			class, n, ok := bracket(pat[i:])
			if !ok {
				b.WriteString(`\[`)
				i++
				continue
			}
			b.WriteString(class)
			i += n
		case c == '\\':
			if i+1 == len(pat) {
				b.WriteString(`\\`)
				i++
				continue
			}
			i++
			n := runeLen(pat[i:])
			b.WriteString(regexp.QuoteMeta(pat[i : i+n]))
			i += n
		case syntax == doublestar && c == '{':
			depth++
			b.WriteString(`(?:`)
			i++
		case syntax == doublestar && c == ',' && depth > 0:
			b.WriteByte('|')
			i++
		case syntax == doublestar && c == '}' && depth > 0:
			depth--
			b.WriteByte(')')
			i++
		default:
			n := runeLen(pat[i:])
			b.WriteString(regexp.QuoteMeta(pat[i : i+n]))
			i += n
		}
	}
	if depth > 0 {
		return "", errors.New("unclosed brace '{'")
	}
	return b.String(), nil
}

// runeLen returns the byte length of the first (possibly invalid) UTF-8
// sequence of s, at least 1.
func runeLen(s string) int {
	for i := range s {
		if i > 0 {
			return i
		}
	}
	return len(s)
}

// posixClasses are the [:name:] classes of fnmatch that RE2 also knows.
var posixClasses = []string{"alnum", "alpha", "ascii", "blank", "cntrl", "digit",
	"graph", "lower", "print", "punct", "space", "upper", "word", "xdigit"}

// bracket translates the bracket expression at the start of s (s[0] is
// '[') into an RE2 class that never matches '/'. It returns the class, the
// number of bytes of s it used, and false if the bracket is not closed.
func bracket(s string) (string, int, bool) {
	var b strings.Builder
	i := 1
	negate := false
	if i < len(s) && (s[i] == '!' || s[i] == '^') {
		negate = true
		i++
	}
	if negate {
		b.WriteString(`[^/`)
	} else {
		b.WriteString(`[`)
	}
	first := true
	empty := true
	for i < len(s) {
		c := s[i]
		switch {
		case c == ']' && !first:
			if empty && negate {
				return `[^/]`, i + 1, true
			}
			if empty {
				// Only a '/' was listed: a class that matches nothing.
				return `[^\x00-\x{10FFFF}]`, i + 1, true
			}
			b.WriteByte(']')
			return b.String(), i + 1, true
		case c == '[' && i+1 < len(s) && s[i+1] == ':':
			end := strings.Index(s[i+2:], ":]")
			name := ""
			if end >= 0 {
				name = s[i+2 : i+2+end]
			}
			known := false
			for _, p := range posixClasses {
				known = known || p == name
			}
			if !known {
				b.WriteString(`\[`) // an ordinary '['
				i++
				break
			}
			b.WriteString("[:" + name + ":]")
			i += 2 + end + 2
			empty = false
		case c == '\\' && i+1 < len(s):
			i++
			n := runeLen(s[i:])
			writeClassChar(&b, s[i:i+n])
			i += n
			empty = empty && s[i-n:i] == "/"
		case c == '/':
			i++ // never matches inside brackets
		case c == '-':
			b.WriteByte('-')
			i++
			empty = false
		default:
			n := runeLen(s[i:])
			writeClassChar(&b, s[i:i+n])
			i += n
			empty = false
		}
		first = false
	}
	return "", 0, false
}

// writeClassChar writes one character for use inside an RE2 class.
func writeClassChar(b *strings.Builder, ch string) {
	if ch == "/" {
		return
	}
	if len(ch) == 1 && ch[0] < 0x80 && !isAlnum(ch[0]) {
		b.WriteByte('\\')
	}
	b.WriteString(ch)
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// A globMatcher matches slash-separated paths against a doublestar
// pattern (see globRegexp).
type globMatcher struct {
	re *regexp.Regexp
	// The common patterns "**/*.go", "*.go", "**/Makefile" are matched
	// on the name alone, without the regular expression: quick, with
	// anyDepth for "**/" (else the path must have no folder).
	quick    nameMatch
	anyDepth bool
}

// compileGlob compiles a doublestar pattern matched against whole paths.
func compileGlob(pat string) (*globMatcher, error) {
	body, err := globRegexp(pat, doublestar)
	if err != nil {
		return nil, err
	}
	re, err := regexp.Compile(`^` + body + `$`)
	if err != nil {
		return nil, fmt.Errorf("invalid pattern: %v", err)
	}
	g := &globMatcher{re: re}
	if rest, ok := strings.CutPrefix(pat, "**/"); ok {
		g.quick, g.anyDepth = quickName(rest), true
	} else {
		g.quick = quickName(pat)
	}
	return g, nil
}

// Match reports whether the slash-separated path p matches.
func (g *globMatcher) Match(p string) bool {
	if !g.quick.ok {
		return g.re.MatchString(p)
	}
	i := strings.LastIndexByte(p, '/')
	if i >= 0 && !g.anyDepth {
		return false
	}
	return g.quick.match(p[i+1:])
}

// matchIn is Match for the entry name of the directory dir (slash-separated,
// "" for the walk's start), building the path in scratch only when the
// pattern needs more than the name.
func (g *globMatcher) matchIn(dir, name string, scratch *[]byte) bool {
	if g.quick.ok {
		return (dir == "" || g.anyDepth) && g.quick.match(name)
	}
	*scratch = appendJoin((*scratch)[:0], dir, name)
	return g.re.Match(*scratch)
}

// nameMatch is a one-segment pattern that needs no regular expression: a
// literal name, or "*" then a literal suffix.
type nameMatch struct {
	ok     bool
	suffix bool
	lit    string
}

// quickName returns the nameMatch of seg, not ok when seg is not that
// simple (more glob syntax, a folder, an escape).
func quickName(seg string) nameMatch {
	switch {
	case seg == "" || strings.Contains(seg, "/"):
	case seg[0] == '*' && !hasMeta(seg[1:]):
		return nameMatch{ok: true, suffix: true, lit: seg[1:]}
	case !hasMeta(seg):
		return nameMatch{ok: true, lit: seg}
	}
	return nameMatch{}
}

func (n nameMatch) match(name string) bool {
	if n.suffix {
		return strings.HasSuffix(name, n.lit)
	}
	return name == n.lit
}

// hasMeta reports whether a path segment has glob syntax in it.
func hasMeta(seg string) bool { return strings.ContainsAny(seg, `*?[{\`) }

// splitStatic splits a doublestar pattern into its leading segments free of
// glob syntax (a directory to start from) and the rest. A pattern whose
// last segment is static keeps it in rest, so that rest is never empty for
// a non-empty pattern.
func splitStatic(pat string) (prefix, rest string) {
	segs := strings.Split(pat, "/")
	n := 0
	for n < len(segs)-1 && !hasMeta(segs[n]) {
		n++
	}
	return strings.Join(segs[:n], "/"), strings.Join(segs[n:], "/")
}
