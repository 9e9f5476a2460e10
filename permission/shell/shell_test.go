package shell_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/shell"
)

func TestParse(t *testing.T) {
	tests := []struct {
		src  string
		want string // shell.String of the script
	}{
		{"git status", "[git status]"},
		{"git status; rm -rf ~", "[git status] [rm -rf ~]"},
		{"a && b || c | d\ne", "[a] [b] [c] [d] [e]"},
		{`git status"; rm -rf ~"`, "[git status; rm -rf ~]"},
		{`git status\;rm`, "[git status;rm]"},
		{`'git' "st"'at'us`, "[git status]"},
		{`echo "a\$b\"c\\d\e"`, `[echo a$b"c\d\e]`},
		{"PATH=/tmp git status", "[PATH=/tmp git status]"},
		{"(a; b) > out", "[>out] [a] [b]"},
		{"{ a; } 2>&1", "[2>&1] [a]"},
		{"f(){ rm x; }; f", "[rm x] [f] risks=[function definition]"},
		{"echo $(rm x)", "[echo $(rm x)] [rm x] risks=[command substitution]"},
		{"echo `rm x`", "[echo `rm x`] [rm x] risks=[command substitution]"},
		{"cat <(rm x)", "[cat <(rm x)] [rm x] risks=[process substitution]"},
		{"ls *.go", "[ls *.go]"},
		{"echo $((1+2))", "[echo $((1+2))] risks=[arithmetic evaluation]"},
		{"export A=1 B", "[A=1 B= export]"},
		{"cat <<EOF\nx\nEOF", "[cat <<EOF]"},
		{"if a; then b; else c; fi", "[a] [b] [c]"},
		{"for x in 1 2; do echo $x; done", "[echo $x]"},
		{"> f", "[>f]"},
	}
	for _, tt := range tests {
		s, err := shell.Parse(tt.src)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.src, err)
			continue
		}
		if got := shell.String(s); got != tt.want {
			t.Errorf("Parse(%q) = %s; want %s", tt.src, got, tt.want)
		}
	}
}

func TestParseWords(t *testing.T) {
	s, err := shell.Parse(`ls ~/x '*' * a{b,c} \* {"x",-delete} {'a','b'} {x}"y" "a"{b} '{' '}' \{"a",b\}`)
	if err != nil {
		t.Fatal(err)
	}
	got := s.Commands[0].Args
	want := []permission.Word{{Value: "ls", Literal: true}, {Value: "~/x", Literal: true}, {Value: "*", Literal: true},
		{Value: "*", Literal: false}, {Value: "a{b,c}", Literal: false}, {Value: "*", Literal: true},
		// A brace expression across quoted pieces is two words to bash.
		{Value: `{"x",-delete}`, Literal: false}, {Value: `{'a','b'}`, Literal: false},
		{Value: "{x}y", Literal: true}, {Value: "a{b}", Literal: true}, {Value: "{", Literal: true}, {Value: "}", Literal: true},
		{Value: "{a,b}", Literal: true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Parse words (-want +got):\n%s", diff)
	}
}

func TestParseError(t *testing.T) {
	for _, src := range []string{"ls 'x", "a &&", "(", "if a; then", "echo $(", "f() {"} {
		if _, err := shell.Parse(src); err == nil {
			t.Errorf("Parse(%q) = nil error; want a syntax error", src)
		} else if !strings.Contains(err.Error(), ":") {
			t.Errorf("Parse(%q) error %q has no position", src, err)
		}
	}
}

// FuzzParse checks that Parse never panics, is deterministic, and that
// what it returns re-checks consistently: a command Check allows has
// literal words only, each of its simple commands re-quoted parses back to
// the same words and is allowed on its own.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"git status", "git status; rm -rf ~", "ls -la | wc -l", `git status\;rm`,
		"echo $(id)", "cat <(ls)", "f(){ ls; }; f", "PATH=/x ls", "ls > out 2>&1", "cat <<EOF\n$x\nEOF",
		`'git' "status"`, "find . -name '*.go' -exec rm {} \\;", "a=(1 2); echo ${a[0]}"} {
		f.Add(s)
	}
	p := permission.Policy{Allow: []permission.Rule{permission.MustParseRule("Bash(git status:*)"), permission.MustParseRule("Bash(npm test)")},
		Home: "/home/u", Shell: shell.Parse}
	check := func(cmd string) permission.Decision {
		in, _ := json.Marshal(map[string]string{"command": cmd})
		return p.Check(permission.Request{Tool: "Bash", Input: in, Cwd: "/home/u/p"})
	}
	f.Fuzz(func(t *testing.T, src string) {
		if !utf8.ValidString(src) {
			return // a JSON input cannot carry it
		}
		s1, err1 := shell.Parse(src)
		s2, err2 := shell.Parse(src)
		if (err1 == nil) != (err2 == nil) || !cmp.Equal(s1, s2) {
			t.Fatalf("Parse(%q) is not deterministic", src)
		}
		d := check(src)
		if err1 != nil {
			if d.Behavior == permission.Allow {
				t.Fatalf("Check(%q) = allow for an unparseable command", src)
			}
			return
		}
		if d.Behavior != permission.Allow {
			return
		}
		if len(s1.Risks) > 0 {
			t.Fatalf("Check(%q) = allow with risks %v", src, s1.Risks)
		}
		for _, c := range s1.Commands {
			var quoted []string
			for _, w := range c.Args {
				if !w.Literal {
					t.Fatalf("Check(%q) = allow with non-literal word %q", src, w.Value)
				}
				if strings.ContainsRune(w.Value, 0) {
					return // NUL cannot be quoted: nothing to compare
				}
				quoted = append(quoted, "'"+strings.ReplaceAll(w.Value, "'", `'\''`)+"'")
			}
			if len(quoted) == 0 {
				continue
			}
			line := strings.Join(quoted, " ")
			s3, err := shell.Parse(line)
			if err != nil || len(s3.Commands) != 1 || !cmp.Equal(s3.Commands[0].Args, c.Args) {
				t.Fatalf("Parse(%q): command %q re-quoted as %q parses to %s (%v)", src, c.String(), line, shell.String(s3), err)
			}
			if d := check(line); d.Behavior != permission.Allow {
				t.Fatalf("Check(%q) = allow but its part %q = %s (%s)", src, line, d.Behavior, d.Reason)
			}
		}
	})
}

// TestNestedBudget checks that deeply nested and repeated eval / sh -c
// texts stay fast.
func TestNestedBudget(t *testing.T) {
	p := permission.Policy{Deny: []permission.Rule{permission.MustParseRule("Bash(rm:*)")}, Shell: shell.Parse}
	cmd := strings.Repeat("eval ", 2000) + "; " + strings.Repeat("sh -c -c ", 2000)
	for range 3 {
		cmd = cmd + " ; " + cmd
	}
	in, _ := json.Marshal(map[string]string{"command": cmd})
	done := make(chan permission.Decision, 1)
	go func() { done <- p.Check(permission.Request{Tool: "Bash", Input: in, Cwd: "/p"}) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Check on a nested command took more than 10s")
	}
}
