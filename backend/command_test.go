package backend

import (
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// words parses line as one POSIX shell command list and returns the
// words of each simple command, expanded as the shell would (no variable
// is set, so an unquoted $X would vanish and show up as a difference).
func words(t testing.TB, line string) [][]string {
	t.Helper()
	f, err := syntax.NewParser(syntax.Variant(syntax.LangPOSIX)).Parse(strings.NewReader(line), "")
	if err != nil {
		t.Fatalf("parse %q: %v", line, err)
	}
	var out [][]string
	syntax.Walk(f, func(n syntax.Node) bool {
		call, ok := n.(*syntax.CallExpr)
		if !ok {
			return true
		}
		if len(call.Assigns) > 0 {
			t.Fatalf("parse %q: unexpected assignment before a command", line)
		}
		fields, err := expand.Fields(&expand.Config{}, call.Args...)
		if err != nil {
			t.Fatalf("expand %q: %v", line, err)
		}
		out = append(out, fields)
		return false
	})
	return out
}

// ctrlOrInvalid reports whether s must be refused.
func ctrlOrInvalid(s string) bool {
	return !utf8.ValidString(s) || strings.IndexFunc(s, unicode.IsControl) >= 0
}

func TestShellQuote(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "''"},
		{"plain", "'plain'"},
		{"it's", `'it'\''s'`},
		{"$HOME `id` \\ \"x\"", `'$HOME ` + "`id`" + ` \ "x"'`},
		{"''", `''\'''\'''`},
	}
	for _, tt := range tests {
		got, err := ShellQuote(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ShellQuote(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"a\nb", "\x00", "\x1b[31m", "tab\t", "del\x7f", "c1\u0085", "\xff"} {
		if got, err := ShellQuote(bad); err == nil {
			t.Errorf("ShellQuote(%q) = %q, nil; want an error", bad, got)
		}
	}
}

func TestPaneCommand(t *testing.T) {
	got, err := PaneCommand("/work/it's here", map[string]string{"B": "2", "A": "", "C": "x y"}, []string{"/usr/bin/troupe", "--agent-id", "a@t", "it's"})
	if err != nil {
		t.Fatal(err)
	}
	want := `cd '/work/it'\''s here' && exec env A='' B='2' C='x y' '/usr/bin/troupe' '--agent-id' 'a@t' 'it'\''s'`
	if got != want {
		t.Errorf("PaneCommand =\n%s\nwant\n%s", got, want)
	}
	got, err = PaneCommand("", nil, []string{"troupe"})
	if want := "exec env 'troupe'"; err != nil || got != want {
		t.Errorf("PaneCommand without cwd and env = %q, %v; want %q", got, err, want)
	}
	bad := []struct {
		name string
		cwd  string
		env  map[string]string
		argv []string
		want string
	}{
		{"relative cwd", "x", nil, []string{"a"}, "not absolute"},
		{"newline in cwd", "/a\nb", nil, []string{"a"}, "working folder"},
		{"empty argv", "/", nil, nil, "argv is empty"},
		{"empty argv0", "/", nil, []string{""}, "argv is empty"},
		{"dash argv0", "/", nil, []string{"-u"}, "env would read it as an option"},
		{"assignment argv0", "/", nil, []string{"A=b"}, "env would read it as a variable"},
		{"bad name", "/", map[string]string{"1A": "x"}, []string{"a"}, `name "1A"`},
		{"empty name", "/", map[string]string{"": "x"}, []string{"a"}, `name ""`},
		{"control in value", "/", map[string]string{"A": "x\ry"}, []string{"a"}, "environment variable A"},
		{"control in arg", "/", nil, []string{"a", "b", "\x07"}, "argument 2"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			got, err := PaneCommand(tt.cwd, tt.env, tt.argv)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("PaneCommand = %q, %v; want an error containing %q", got, err, tt.want)
			}
		})
	}
}

// The command line means the same to a real /bin/sh as to the parser.
func TestPaneCommandInRealShell(t *testing.T) {
	dir := t.TempDir()
	args := []string{"it's", "$HOME", "a b", "", "*", "\\", "ünï"}
	line, err := PaneCommand(dir, map[string]string{"T_V": "$x 'q'", "T_EMPTY": ""},
		append([]string{"/bin/sh", "-c", `pwd; printf '[%s]\n' "$@"; echo "$T_V"; echo "${T_EMPTY-unset}|"`, "sh"}, args...))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/sh", "-c", line)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "T_EMPTY=ambient"}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sh -c %q: %v", line, err)
	}
	var want strings.Builder
	want.WriteString(dir + "\n")
	for _, a := range args {
		want.WriteString("[" + a + "]\n")
	}
	want.WriteString("$x 'q'\n|\n")
	if string(out) != want.String() {
		t.Errorf("shell printed\n%s\nwant\n%s", out, want.String())
	}
}

func FuzzShellQuote(f *testing.F) {
	for _, s := range []string{"", "a", "it's", "'", "''", `\'`, "$(id)", "`id`", "a b", "\n", "ü", "\xff", "#", ";", "&&", "!", "*?[", "~"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := ShellQuote(s)
		if ctrlOrInvalid(s) {
			if err == nil {
				t.Fatalf("ShellQuote(%q) = %q, nil; want an error", s, q)
			}
			return
		}
		if err != nil {
			t.Fatalf("ShellQuote(%q) = %v", s, err)
		}
		got := words(t, "x "+q)
		if want := [][]string{{"x", s}}; !reflect.DeepEqual(got, want) {
			t.Fatalf("ShellQuote(%q) = %s parses to %q; want %q", s, q, got, want)
		}
	})
}

func FuzzPaneCommand(f *testing.F) {
	f.Add("/tmp/x", "K", "v", "/bin/troupe", "--agent-id", "a@t")
	f.Add("/tmp/it's", "EMPTY", "", "prog", "$HOME", "`id`")
	f.Add("", "A_1", "a b", "troupe", "", "'")
	f.Add("/", "1BAD", "x", "-opt", "a;", "\n")
	f.Fuzz(func(t *testing.T, cwd, k, v, argv0, a1, a2 string) {
		argv := []string{argv0, a1, a2}
		line, err := PaneCommand(cwd, map[string]string{k: v}, argv)
		bad := (cwd != "" && (!strings.HasPrefix(cwd, "/") || ctrlOrInvalid(cwd))) ||
			!validEnvName(k) || ctrlOrInvalid(v) ||
			argv0 == "" || strings.HasPrefix(argv0, "-") || strings.Contains(argv0, "=") ||
			slices.ContainsFunc(argv, ctrlOrInvalid)
		if bad {
			if err == nil {
				t.Fatalf("PaneCommand(%q, %q=%q, %q) = %q, nil; want an error", cwd, k, v, argv, line)
			}
			return
		}
		if err != nil {
			t.Fatalf("PaneCommand(%q, %q=%q, %q) = %v", cwd, k, v, argv, err)
		}
		want := [][]string{{"exec", "env", k + "=" + v, argv0, a1, a2}}
		if cwd != "" {
			want = append([][]string{{"cd", cwd}}, want...)
		}
		if got := words(t, line); !reflect.DeepEqual(got, want) {
			t.Fatalf("PaneCommand = %s parses to %q; want %q", line, got, want)
		}
	})
}
