package backend

import (
	"os"
	"os/exec"
	"path/filepath"
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

func TestEnvFile(t *testing.T) {
	got, err := EnvFile(map[string]string{"B": "2", "A": "", "C": "x y'z"})
	if err != nil {
		t.Fatal(err)
	}
	want := "export A=''\nexport B='2'\nexport C='x y'\\''z'\n"
	if string(got) != want {
		t.Errorf("EnvFile =\n%s\nwant\n%s", got, want)
	}
	if got, err := EnvFile(nil); err != nil || len(got) != 0 {
		t.Errorf("EnvFile(nil) = %q, %v; want empty", got, err)
	}
	for _, tt := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"1A": "x"}, `name "1A"`},
		{map[string]string{"": "x"}, `name ""`},
		{map[string]string{"A-B": "x"}, `name "A-B"`},
		{map[string]string{"A": "x\ry"}, "environment variable A"},
		{map[string]string{"A": "x\ny"}, "environment variable A"},
	} {
		if got, err := EnvFile(tt.env); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("EnvFile(%q) = %q, %v; want an error containing %q", tt.env, got, err, tt.want)
		}
	}
}

func TestPaneCommand(t *testing.T) {
	got, err := PaneCommand("/work/it's here", "/tmp/d/env-1", []string{"/usr/bin/troupe", "--agent-id", "a@t", "it's"})
	if err != nil {
		t.Fatal(err)
	}
	want := `. '/tmp/d/env-1' && rm -f '/tmp/d/env-1' && cd '/work/it'\''s here' && exec '/usr/bin/troupe' '--agent-id' 'a@t' 'it'\''s'`
	if got != want {
		t.Errorf("PaneCommand =\n%s\nwant\n%s", got, want)
	}
	got, err = PaneCommand("", "", []string{"troupe"})
	if want := "exec 'troupe'"; err != nil || got != want {
		t.Errorf("PaneCommand without cwd and env file = %q, %v; want %q", got, err, want)
	}
	bad := []struct {
		name    string
		cwd     string
		envFile string
		argv    []string
		want    string
	}{
		{"relative cwd", "x", "", []string{"a"}, "not absolute"},
		{"newline in cwd", "/a\nb", "", []string{"a"}, "working folder"},
		{"relative env file", "/", "env", []string{"a"}, `environment file "env" is not absolute`},
		{"newline in env file", "/", "/a\nb", []string{"a"}, "environment file"},
		{"empty argv", "/", "", nil, "argv is empty"},
		{"empty argv0", "/", "", []string{""}, "argv is empty"},
		{"dash argv0", "/", "", []string{"-u"}, "exec would read it as an option"},
		{"control in arg", "/", "", []string{"a", "b", "\x07"}, "argument 2"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			got, err := PaneCommand(tt.cwd, tt.envFile, tt.argv)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("PaneCommand = %q, %v; want an error containing %q", got, err, tt.want)
			}
		})
	}
}

// The command line and the environment file mean the same to a real
// /bin/sh as to the parser; the file is gone once the program runs, and
// no value is on the command line.
func TestPaneCommandInRealShell(t *testing.T) {
	dir := t.TempDir()
	envFile := filepath.Join(t.TempDir(), "env it's")
	text, err := EnvFile(map[string]string{"T_V": "$x 'q'", "T_EMPTY": "", "T_SECRET": "sk-not-on-argv"})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(envFile, text, 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"it's", "$HOME", "a b", "", "*", "\\", "ünï"}
	line, err := PaneCommand(dir, envFile,
		append([]string{"/bin/sh", "-c", `pwd; printf '[%s]\n' "$@"; echo "$T_V"; echo "${T_EMPTY-unset}|"; echo "$T_SECRET"; test -e "$ENVF" && echo still there; true`, "sh"}, args...))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(line, "sk-not-on-argv") {
		t.Fatalf("command line %s holds a value", line)
	}
	cmd := exec.Command("/bin/sh", "-c", line)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "T_EMPTY=ambient", "ENVF=" + envFile}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sh -c %q: %v", line, err)
	}
	var want strings.Builder
	want.WriteString(dir + "\n")
	for _, a := range args {
		want.WriteString("[" + a + "]\n")
	}
	want.WriteString("$x 'q'\n|\nsk-not-on-argv\n")
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
	f.Add("/tmp/x", "/tmp/e/env-1", "/bin/troupe", "--agent-id", "a@t")
	f.Add("/tmp/it's", "/tmp/it's env", "prog", "$HOME", "`id`")
	f.Add("", "", "troupe", "", "'")
	f.Add("/", "rel", "-opt", "a;", "\n")
	f.Fuzz(func(t *testing.T, cwd, envFile, argv0, a1, a2 string) {
		argv := []string{argv0, a1, a2}
		line, err := PaneCommand(cwd, envFile, argv)
		bad := (cwd != "" && (!strings.HasPrefix(cwd, "/") || ctrlOrInvalid(cwd))) ||
			(envFile != "" && (!strings.HasPrefix(envFile, "/") || ctrlOrInvalid(envFile))) ||
			argv0 == "" || strings.HasPrefix(argv0, "-") ||
			slices.ContainsFunc(argv, ctrlOrInvalid)
		if bad {
			if err == nil {
				t.Fatalf("PaneCommand(%q, %q, %q) = %q, nil; want an error", cwd, envFile, argv, line)
			}
			return
		}
		if err != nil {
			t.Fatalf("PaneCommand(%q, %q, %q) = %v", cwd, envFile, argv, err)
		}
		want := [][]string{{"exec", argv0, a1, a2}}
		if cwd != "" {
			want = append([][]string{{"cd", cwd}}, want...)
		}
		if envFile != "" {
			want = append([][]string{{".", envFile}, {"rm", "-f", envFile}}, want...)
		}
		if got := words(t, line); !reflect.DeepEqual(got, want) {
			t.Fatalf("PaneCommand = %s parses to %q; want %q", line, got, want)
		}
	})
}
