package filetool

import (
	"bytes"
	"regexp/syntax"
	"unicode"
	"unicode/utf8"
)

// literal is a byte string that every match of a pattern contains: Grep
// looks for it with a fast byte search before running the regular
// expression, and skips a file (or the lines) without it.
type literal struct {
	s    []byte // the bytes; lower case ASCII when fold
	fold bool   // ASCII case-insensitive
	rare int    // fold: the index in s of the byte to look for first
}

// requiredLiteral returns the longest literal that every match of the
// parsed pattern re contains, or nil when it finds none. Under case
// folding it keeps only runes whose every case variant is ASCII, so that a
// byte comparison that ignores ASCII case finds all of them ('k' and 's'
// are left out: the Kelvin sign and the long s fold to them).
func requiredLiteral(re *syntax.Regexp) *literal {
	var best *literal
	var visit func(re *syntax.Regexp)
	visit = func(re *syntax.Regexp) {
		switch re.Op {
		case syntax.OpLiteral:
			for _, l := range literalPieces(re.Rune, re.Flags&syntax.FoldCase != 0) {
				if best == nil || len(l.s) > len(best.s) {
					best = l
				}
			}
		case syntax.OpCapture, syntax.OpPlus:
			visit(re.Sub[0])
		case syntax.OpRepeat:
			if re.Min >= 1 {
				visit(re.Sub[0])
			}
		case syntax.OpConcat:
			for _, sub := range re.Sub {
				visit(sub)
			}
		}
	}
	visit(re)
	return best
}

// literalPieces splits the runes of a literal node into the pieces a byte
// search can find: a rune that matches other bytes than its own encoding
// (U+FFFD, which invalid UTF-8 matches; under folding, a rune with a
// non-ASCII case variant) ends a piece.
func literalPieces(runes []rune, fold bool) []*literal {
	var out []*literal
	var cur []byte
	flush := func() {
		if len(cur) > 0 {
			out = append(out, newLiteral(cur, fold))
		}
		cur = nil
	}
	for _, r := range runes {
		switch {
		case r == utf8.RuneError:
			flush()
		case fold && !asciiFoldOrbit(r):
			flush()
		case fold:
			cur = append(cur, byte(unicode.ToLower(r)))
		default:
			cur = utf8.AppendRune(cur, r)
		}
	}
	flush()
	return out
}

// asciiFoldOrbit reports whether r and all the runes it folds to are ASCII.
func asciiFoldOrbit(r rune) bool {
	if r >= utf8.RuneSelf {
		return false
	}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// newLiteral returns the literal s, choosing for a folded one the byte
// least likely to occur in text to look for first.
func newLiteral(s []byte, fold bool) *literal {
	l := &literal{s: s, fold: fold}
	if fold {
		for i := range s {
			if byteRank(s[i]) < byteRank(s[l.rare]) {
				l.rare = i
			}
		}
	}
	return l
}

// byteRank is a rough measure of how common the byte c (lower case) is in
// source code and prose: lower is rarer.
func byteRank(c byte) int {
	switch {
	case c == ' ' || c == 'e':
		return 250
	case bytes.IndexByte([]byte("taoinsrhl\t"), c) >= 0:
		return 200
	case c >= 'a' && c <= 'z':
		return 150
	case bytes.IndexByte([]byte("(){}.,;:_=*\"'/-"), c) >= 0:
		return 120
	case c >= '0' && c <= '9':
		return 80
	}
	return 30
}

// index returns the index of the first occurrence of l in b, or -1.
func (l *literal) index(b []byte) int {
	if !l.fold {
		return bytes.Index(b, l.s)
	}
	n, k := len(l.s), l.rare
	lo := l.s[k]
	up := lo
	if lo >= 'a' && lo <= 'z' {
		up = lo - 'a' + 'A'
	}
	// nextLo and nextUp are the next positions of each variant at or
	// after from; -1 when there is none left.
	from, nextLo, nextUp := k, -2, -2
	if up == lo {
		nextUp = -1
	}
	for {
		if nextLo != -1 && nextLo < from {
			nextLo = indexFrom(b, lo, from)
		}
		if nextUp != -1 && nextUp < from {
			nextUp = indexFrom(b, up, from)
		}
		i := nextLo
		if i < 0 || (nextUp >= 0 && nextUp < i) {
			i = nextUp
		}
		if i < 0 {
			return -1
		}
		if start := i - k; start+n <= len(b) && foldEqual(b[start:start+n], l.s) {
			return start
		}
		from = i + 1
	}
}

// indexFrom returns the index of c in b at or after from, or -1.
func indexFrom(b []byte, c byte, from int) int {
	if from >= len(b) {
		return -1
	}
	if i := bytes.IndexByte(b[from:], c); i >= 0 {
		return from + i
	}
	return -1
}

// foldEqual reports whether b equals lower, a lower case ASCII string,
// ignoring ASCII case.
func foldEqual(b, lower []byte) bool {
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}
