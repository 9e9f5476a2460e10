package filetool

import (
	"strings"
	"testing"
)

func TestCompileGlob(t *testing.T) {
	tests := []struct {
		pattern string
		match   []string
		noMatch []string
	}{
		{"*.go", []string{"a.go", ".go"}, []string{"d/a.go", "a.gox", "a.g"}},
		{"**/*.go", []string{"a.go", "d/a.go", "d/e/a.go"}, []string{"a.goo", "d/a.txt"}},
		{"src/**/test_*.py", []string{"src/test_a.py", "src/x/y/test_b.py"}, []string{"src/x/a.py", "lib/test_a.py", "src/test_a.pyc"}},
		{"*.{ts,tsx}", []string{"a.ts", "a.tsx"}, []string{"a.js", "a.t", "d/a.ts"}},
		{"{src,lib}/**/*.go", []string{"lib/x/a.go", "src/a.go"}, []string{"cmd/a.go"}},
		{"{a,{b,c}}.x", []string{"a.x", "b.x", "c.x"}, []string{"d.x", "{a.x"}},
		{"{**/a,b}", []string{"x/y/a", "a", "b"}, []string{"x/b"}},
		{"a/**", []string{"a/b", "a/b/c"}, []string{"b/a", "ab/c"}},
		{"**", []string{"a", "a/b/c"}, nil},
		{"a/**/b", []string{"a/b", "a/x/b", "a/x/y/b"}, []string{"a/xb", "ab"}},
		{"?.txt", []string{"a.txt"}, []string{"ab.txt", "/.txt"}},
		{"[a-c]*.md", []string{"b.md", "cx.md"}, []string{"d.md"}},
		{"[!a]*", []string{"b", "bcd"}, []string{"a", "abc"}},
		{"[^a]", []string{"b"}, []string{"a", "/"}},
		{"[]]", []string{"]"}, []string{"a"}},
		{"[[:digit:]]*", []string{"1abc"}, []string{"abc"}},
		{`\*.go`, []string{"*.go"}, []string{"a.go"}},
		{"a**b", []string{"ab", "axxb"}, []string{"ax/xb"}},
		{"[ab", []string{"[ab"}, []string{"a"}},
		{"a.(b)+", []string{"a.(b)+"}, []string{"a.b"}},
		{"über/*.txt", []string{"über/a.txt"}, []string{"uber/a.txt"}},
		{"x}", []string{"x}"}, nil},
	}
	for _, tt := range tests {
		m, err := compileGlob(tt.pattern)
		if err != nil {
			t.Errorf("compileGlob(%q) error = %v", tt.pattern, err)
			continue
		}
		for _, p := range tt.match {
			if !m.Match(p) {
				t.Errorf("compileGlob(%q).Match(%q) = false; want true (re %s)", tt.pattern, p, m.re)
			}
		}
		for _, p := range tt.noMatch {
			if m.Match(p) {
				t.Errorf("compileGlob(%q).Match(%q) = true; want false (re %s)", tt.pattern, p, m.re)
			}
		}
	}
}

func TestCompileGlobErrors(t *testing.T) {
	for _, pat := range []string{"{a,b", "[z-a]", "{{a}"} {
		if _, err := compileGlob(pat); err == nil {
			t.Errorf("compileGlob(%q) error = nil; want an error", pat)
		}
	}
}

func TestSplitStatic(t *testing.T) {
	tests := []struct{ pat, prefix, rest string }{
		{"**/*.go", "", "**/*.go"},
		{"src/**/test_*.py", "src", "**/test_*.py"},
		{"a/b/c.go", "a/b", "c.go"},
		{"a/{b,c}/d", "a", "{b,c}/d"},
		{"/abs/dir/*.go", "/abs/dir", "*.go"},
		{"x", "", "x"},
	}
	for _, tt := range tests {
		if p, r := splitStatic(tt.pat); p != tt.prefix || r != tt.rest {
			t.Errorf("splitStatic(%q) = %q, %q; want %q, %q", tt.pat, p, r, tt.prefix, tt.rest)
		}
	}
}

// The name-only matching of simple patterns agrees with the regular
// expression they compile to, for Glob patterns and ignore rules.
func TestQuickNameAgrees(t *testing.T) {
	pats := []string{"*.go", "**/*.go", "Makefile", "**/Makefile", "*", "**/*", ".go", "*.tar.gz", "**/.env", "*.", "**/*é"}
	paths := []string{"a.go", "x/a.go", "x/y/a.go", ".go", "a.go/b", "Makefile", "x/Makefile", "xMakefile", "a.tar.gz", "d/.env", ".env",
		"a.", "é", "x/é", "a\xffb.go", "", "x/"}
	for _, pat := range pats {
		g, err := compileGlob(pat)
		if err != nil {
			t.Fatal(err)
		}
		if !g.quick.ok && pat != "**/*" && pat != "*" {
			t.Errorf("%q is not matched by name", pat)
		}
		for _, p := range paths {
			if got, want := g.Match(p), g.re.MatchString(p); got != want {
				t.Errorf("glob %q on %q: %v by name, %v by regexp", pat, p, got, want)
			}
		}
		r, ok := parseIgnoreLine(pat)
		if !ok {
			continue
		}
		for _, p := range paths {
			f := &ignoreFile{rules: []ignoreRule{r}}
			got, _ := f.match(p, false)
			want := r.re.MatchString(p)
			if got != want {
				t.Errorf("ignore %q on %q: %v by name, %v by regexp", pat, p, got, want)
			}
		}
	}
}

func FuzzQuickName(f *testing.F) {
	for _, s := range [][2]string{{"*.go", "a/b.go"}, {"**/x", "x"}, {"*", "a/b"}, {"[a].go", "a.go"}, {"a\\*", "a*"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pat, p string) {
		g, err := compileGlob(pat)
		if err != nil {
			return
		}
		if got, want := g.Match(p), g.re.MatchString(p); got != want {
			t.Errorf("glob %q on %q: %v quick, %v regexp", pat, p, got, want)
		}
		var scratch []byte
		dir, name := splitLast(p)
		if got, want := g.matchIn(dir, name, &scratch), g.Match(p); walkable(p) && got != want {
			t.Errorf("glob %q on %q: matchIn(%q, %q) = %v; Match %v", pat, p, dir, name, got, want)
		}
		if r, ok := parseIgnoreLine(pat); ok && !r.dirOnly {
			f := &ignoreFile{rules: []ignoreRule{r}}
			ignored, decided := f.match(p, false)
			if m := r.re.MatchString(p); decided != m || (m && ignored == r.negate) {
				t.Errorf("ignore %q on %q: decided %v ignored %v, but the regexp matches: %v", pat, p, decided, ignored, m)
			}
		}
	})
}

// splitLast splits a slash-separated path into its folder ("" for none)
// and its last segment.
func splitLast(p string) (dir, name string) {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return "", p
	}
	return p[:i], p[i+1:]
}

// walkable reports whether p is a path a walk can give: segments neither
// empty nor "." or "..".
func walkable(p string) bool {
	for seg := range strings.SplitSeq(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}
