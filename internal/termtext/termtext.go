// Package termtext makes untrusted text safe to print on a terminal.
//
// Inbox messages, task subjects and team fields are written by other
// programs and by models; printed raw, an ESC, CSI or OSC sequence in them
// could move the cursor, rewrite earlier lines, set the window title or
// plant hyperlinks. Clean and Line replace every control character with a
// visible escape instead of dropping it, so nothing is hidden from the
// reader: ESC becomes `\x1b`, the C1 control U+009B becomes `\u009b`, a
// byte that is not valid UTF-8 becomes `\xff`. So an SGR, CSI, OSC or
// DCS sequence shows as text (`\x1b[8m`) and does nothing. The Unicode
// characters that reorder or hide what a reader sees are escaped the same
// way (`\u202e`): the bidirectional overrides, embeddings, isolates and
// marks (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C), the
// zero-width and invisible characters (U+200B–U+200D, U+2060–U+2064,
// U+FEFF, U+00AD, U+180E) and the tag characters (U+E0000–U+E007F).
//
// The output is always valid UTF-8 and holds none of the bytes
// 0x00–0x08, 0x0B–0x1F, 0x7F, the code points U+0080–U+009F or the
// characters above. The functions are pure and safe for concurrent use.
package termtext

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Clean returns s with every control character escaped except newline and
// tab, for multi-line text such as a message body.
func Clean(s string) string { return clean(s, true) }

// Line returns s with every control character escaped, newline and tab
// included, for text that must stay on one line (a table cell, a name).
func Line(s string) string { return clean(s, false) }

func clean(s string, layout bool) string {
	if safe(s, layout) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case layout && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case escaped(r) && r > 0xffff:
			fmt.Fprintf(&b, `\U%08x`, r)
		case escaped(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// safe reports whether s needs no escaping.
func safe(s string, layout bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
			return !strings.ContainsFunc(s[i:], func(r rune) bool {
				return r == utf8.RuneError || r < 0x20 && !(layout && (r == '\n' || r == '\t')) || r == 0x7f || escaped(r)
			}) && utf8.ValidString(s[i:])
		}
		if c < 0x20 && !(layout && (c == '\n' || c == '\t')) || c == 0x7f {
			return false
		}
	}
	return true
}

// escaped reports whether r, a printable-range rune, is a C1 control, a
// bidirectional control or an invisible character.
func escaped(r rune) bool {
	switch {
	case r < 0x80:
		return false
	case r <= 0x9f, r == 0xad, r == 0x61c, r == 0x180e, r == 0xfeff:
		return true
	case r >= 0x200b && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2060 && r <= 0x2069:
		return true
	}
	return r >= 0xe0000 && r <= 0xe007f
}
