package filetool

import (
	"regexp"
	"strings"
	"testing"
)

func TestIgnore(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string // base directory -> .gitignore content
		path    string
		isDir   bool
		ignored bool
	}{
		{"name at top", map[string]string{"": "*.log"}, "a.log", false, true},
		{"name at depth", map[string]string{"": "*.log"}, "d/e/a.log", false, true},
		{"no match", map[string]string{"": "*.log"}, "a.txt", false, false},
		{"anchored", map[string]string{"": "/build"}, "build", true, true},
		{"anchored, deeper", map[string]string{"": "/build"}, "d/build", true, false},
		{"dir pattern on a dir", map[string]string{"": "build/"}, "d/build", true, true},
		{"dir pattern on a file", map[string]string{"": "build/"}, "build", false, false},
		{"middle slash anchors", map[string]string{"": "doc/*.txt"}, "doc/a.txt", false, true},
		{"middle slash, deeper", map[string]string{"": "doc/*.txt"}, "x/doc/a.txt", false, false},
		{"star stops at slash", map[string]string{"": "doc/*.txt"}, "doc/x/a.txt", false, false},
		{"leading **", map[string]string{"": "**/foo"}, "a/b/foo", false, true},
		{"middle **", map[string]string{"": "a/**/b"}, "a/x/y/b", false, true},
		{"middle ** zero dirs", map[string]string{"": "a/**/b"}, "a/b", false, true},
		{"trailing **", map[string]string{"": "abc/**"}, "abc/x", false, true},
		{"trailing ** not the dir", map[string]string{"": "abc/**"}, "abc", true, false},
		{"negation", map[string]string{"": "*.log\n!keep.log"}, "keep.log", false, false},
		{"negation, others", map[string]string{"": "*.log\n!keep.log"}, "x.log", false, true},
		{"last match wins", map[string]string{"": "!keep.log\n*.log"}, "keep.log", false, true},
		{"nested re-includes", map[string]string{"": "*.txt", "sub": "!important.txt"}, "sub/important.txt", false, false},
		{"nested, outside its dir", map[string]string{"": "*.txt", "sub": "!important.txt"}, "important.txt", false, true},
		{"nested anchored", map[string]string{"sub": "/gen"}, "sub/gen", true, true},
		{"nested anchored, other dir", map[string]string{"sub": "/gen"}, "gen", true, false},
		{"nested pattern at depth", map[string]string{"sub": "*.o"}, "sub/x/y.o", false, true},
		{"comment", map[string]string{"": "# a.txt\n"}, "# a.txt", false, false},
		{"escaped hash", map[string]string{"": `\#a`}, "#a", false, true},
		{"escaped bang", map[string]string{"": `\!a`}, "!a", false, true},
		{"leading space kept", map[string]string{"": " 0"}, "0", false, false},
		{"trailing spaces dropped", map[string]string{"": "foo   "}, "foo", false, true},
		{"escaped trailing space kept", map[string]string{"": `foo\ `}, "foo ", false, true},
		{"crlf", map[string]string{"": "a.txt\r\nb.txt\r\n"}, "a.txt", false, true},
		{"bom", map[string]string{"": "\xef\xbb\xbfa.txt"}, "a.txt", false, true},
		{"blank and slash-only lines", map[string]string{"": "\n/\n\n"}, "a", false, false},
		{"character class", map[string]string{"": "*.[oa]"}, "lib.a", false, true},
		{"question mark", map[string]string{"": "?.c"}, "ab.c", false, false},
		{"braces are literal", map[string]string{"": "{a,b}"}, "a", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stack ignoreStack
			for _, base := range []string{"", "sub"} { // shallowest first
				if c, ok := tt.files[base]; ok {
					stack = append(stack, parseIgnore(base, []byte(c)))
				}
			}
			if got := stack.ignored(tt.path, tt.isDir); got != tt.ignored {
				t.Errorf("ignored(%q, dir=%v) with %q = %v; want %v", tt.path, tt.isDir, tt.files, got, tt.ignored)
			}
		})
	}
}

// literalName is a .gitignore line that must match itself as a name.
var literalName = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// FuzzIgnore feeds arbitrary .gitignore content and paths to the parser and
// matcher (which read files from disk), and the glob compiler: none may
// panic, and a plain name must ignore itself at any depth unless a later
// line negates it.
func FuzzIgnore(f *testing.F) {
	f.Add("*.log\n!keep.log\n", "keep.log", false)
	f.Add("/build/\n**/node_modules\n", "a/node_modules", true)
	f.Add("doc/**/*.txt\n\\#x\n[!a-z]?\n", "doc/a/b.txt", false)
	f.Add("[[:alpha:]]\n[\n\\", "b", false)
	f.Add("a/**/b/\r\n  \n", "a/b", true)
	f.Add("/c\nd/e\n*.go\n", "sub/c", false)
	f.Add("c/\n!d\n", "x/y/z/d", true)
	f.Add("*.go\n", "x/y", false)
	f.Fuzz(func(t *testing.T, content, path string, isDir bool) {
		ig := parseIgnore("", []byte(content))
		stack := ignoreStack{ig}
		stack.ignored(path, isDir)
		var scratch []byte
		dir, last := splitLast(path)
		for _, base := range []string{"", "sub", "x/y"} {
			if !walkable(path) {
				break
			}
			f := parseIgnore(base, []byte(content))
			ign, dec := f.match(path, isDir)
			if ign2, dec2 := f.matchIn(dir, last, isDir, &scratch); ign2 != ign || dec2 != dec {
				t.Errorf("rules %q in %q on %q: matchIn = %v, %v; match = %v, %v", content, base, path, ign2, dec2, ign, dec)
			}
		}
		for line := range strings.SplitSeq(content, "\n") {
			if m, err := compileGlob(line); err == nil {
				m.Match(path)
			}
		}
		name := strings.TrimSuffix(content, "\n") // leading spaces are part of a pattern
		if literalName.MatchString(name) && name != "." && name != ".." {
			for _, p := range []string{name, "x/" + name, "x/y/" + name} {
				if !stack.ignored(p, isDir) {
					t.Errorf("pattern %q does not ignore %q", name, p)
				}
			}
			neg := ignoreStack{parseIgnore("", []byte(name+"\n!"+name))}
			if neg.ignored(name, isDir) {
				t.Errorf("pattern %q then !%q still ignores %q", name, name, name)
			}
		}
	})
}
