package permission_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/shell"
)

func input(kv ...string) json.RawMessage {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	b, _ := json.Marshal(m)
	return b
}

// allowedBy reports whether rule, the policy's only allow rule, allows
// req (not the built-in read-only judgement).
func allowedBy(t *testing.T, rule string, req permission.Request) bool {
	t.Helper()
	p := permission.Policy{Allow: rules(t, rule), Home: home, Shell: shell.Parse}
	d := p.Check(req)
	return d.Behavior == permission.Allow && d.Rule != nil
}

// "Allow always" saves a rule that covers the call asked and nothing the
// model's own '*' or ':*' would widen it to.
func TestExactRule(t *testing.T) {
	tests := []struct {
		name, tool string
		in         json.RawMessage
		want       string
		covers     []string // Bash commands the rule allows
		not        []string // and does not
	}{
		{name: "plain", tool: "Bash", in: input("command", "go test ./..."), want: "Bash(go test ./...)",
			covers: []string{"go test ./..."}, not: []string{"go test ./... -exec evil", "go test"}},
		{name: "literal star", tool: "Bash", in: input("command", "python3 '*'"), want: "Bash(python3 '*')",
			covers: []string{"python3 '*'", `python3 \*`}, not: []string{"python3 evil.py", "python3 -c 'import os'"}},
		{name: "glob star", tool: "Bash", in: input("command", "python3 *"), want: ""},
		{name: "literal colon star", tool: "Bash", in: input("command", "git log ':*'"), want: "Bash(git log ':*')",
			covers: []string{"git log ':*'"}, not: []string{"git log -p", "git log --output=x"}},
		{name: "glob colon star", tool: "Bash", in: input("command", "git log :*"), want: ""},
		{name: "quoted blank", tool: "Bash", in: input("command", `echo "a b" c`), want: "Bash(echo 'a b' c)",
			covers: []string{"echo 'a b' c"}, not: []string{"echo a b c"}},
		{name: "quote in word", tool: "Bash", in: input("command", `echo "it's; rm"`), want: `Bash(echo 'it'\''s; rm')`,
			covers: []string{`echo "it's; rm"`}, not: []string{"echo it"}},
		{name: "two commands", tool: "Bash", in: input("command", "chmod +x gen.sh && ./gen.sh"), want: ""},
		{name: "expansion", tool: "Bash", in: input("command", "cat $HOME/x"), want: ""},
		{name: "assignment", tool: "Bash", in: input("command", "PAGER=sh git log"), want: ""},
		{name: "edit", tool: "Edit", in: input("file_path", "/home/u/proj/a.go"), want: "Edit(//home/u/proj/a.go)"},
		{name: "edit star", tool: "Write", in: input("file_path", "/home/u/proj/*"), want: "Edit(//home/u/proj/[*])"},
		{name: "edit relative", tool: "Edit", in: input("file_path", "a.go"), want: ""},
		{name: "grep folder", tool: "Grep", in: input("pattern", "x", "path", "/etc"), want: "Read(//etc)"},
		{name: "glob no path", tool: "Glob", in: input("pattern", "**/*"), want: ""},
		{name: "fetch", tool: "WebFetch", in: input("url", "https://Example.com/a?b"), want: "WebFetch(domain:example.com)"},
		{name: "mcp", tool: "mcp__srv__do", in: input("x", "*"), want: "mcp__srv__do"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := permission.ExactRule(tt.tool, tt.in, shell.Parse)
			if got != tt.want {
				t.Fatalf("ExactRule(%s, %s) = %q; want %q", tt.tool, tt.in, got, tt.want)
			}
			if got == "" {
				return
			}
			if _, err := permission.ParseRule(got); err != nil {
				t.Fatalf("ExactRule(%s, %s) = %q, which does not parse: %v", tt.tool, tt.in, got, err)
			}
			for _, c := range tt.covers {
				if !allowedBy(t, got, bash(c, "")) {
					t.Errorf("rule %s does not allow %q", got, c)
				}
			}
			for _, c := range tt.not {
				if allowedBy(t, got, bash(c, "")) {
					t.Errorf("rule %s allows %q; want it to ask", got, c)
				}
			}
		})
	}
	// A file rule covers its file, not the others a '*' would.
	rule := permission.ExactRule("Write", input("file_path", "/home/u/proj/*"), nil)
	write := func(p string) permission.Request {
		return permission.Request{Tool: "Write", Input: input("file_path", p, "content", "x"), Cwd: "/elsewhere"}
	}
	if !allowedBy(t, rule, write("/home/u/proj/*")) || allowedBy(t, rule, write("/home/u/proj/main.go")) {
		t.Errorf("rule %s: want it to allow writing /home/u/proj/* only", rule)
	}
}

// Without a shell parser only plain words make a rule.
func TestExactRuleNoShell(t *testing.T) {
	for cmd, want := range map[string]string{
		"go test ./...":   "Bash(go test ./...)",
		"python3 *":       "",
		"git log :*":      "",
		"ls  -l":          "",
		"echo 'a'":        "",
		"a && b":          "",
		"make check":      "Bash(make check)",
		"git diff a..b:x": "Bash(git diff a..b:x)",
	} {
		if got := permission.ExactRule("Bash", input("command", cmd), nil); got != want {
			t.Errorf("ExactRule(Bash, %q, nil) = %q; want %q", cmd, got, want)
		}
	}
}

// A rule's backslash and quotes make '*' and ':*' literal; a rule with
// neither keeps Claude Code's meaning.
func TestRuleLiteralStar(t *testing.T) {
	tests := []struct {
		rule    string
		allows  []string
		refuses []string
	}{
		{`Bash(python3 \*)`, []string{"python3 '*'"}, []string{"python3 evil.py"}},
		{`Bash(python3 "*")`, []string{"python3 '*'"}, []string{"python3 evil.py"}},
		{`Bash(git log :\*)`, []string{"git log ':*'"}, []string{"git log -p"}},
		{`Bash(python3 *)`, []string{"python3 evil.py"}, nil},
		{`Bash(git log:*)`, []string{"git log -p"}, nil},
	}
	for _, tt := range tests {
		for _, c := range tt.allows {
			if !allowedBy(t, tt.rule, bash(c, "")) {
				t.Errorf("%s does not allow %q", tt.rule, c)
			}
		}
		for _, c := range tt.refuses {
			if allowedBy(t, tt.rule, bash(c, "")) {
				t.Errorf("%s allows %q", tt.rule, c)
			}
		}
	}
}

// FuzzExactRule checks that an exact Bash rule always parses and allows
// the command it was made from, and no other command with one more word.
func FuzzExactRule(f *testing.F) {
	for _, s := range []string{"python3 '*'", "git log ':*'", `echo "it's"`, "go test ./...", `a\ b c`, "x ')'", "echo '\\'"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		if strings.Contains(cmd, "#") {
			return // " evil" would go into a comment
		}
		for _, sh := range []func(string) (permission.Script, error){shell.Parse, nil} {
			rule := permission.ExactRule("Bash", input("command", cmd), sh)
			if rule == "" {
				continue
			}
			if _, err := permission.ParseRule(rule); err != nil {
				t.Fatalf("ExactRule(%q) = %q, which does not parse: %v", cmd, rule, err)
			}
			if allowedBy(t, rule, bash(cmd+" evil", "")) {
				t.Fatalf("ExactRule(%q) = %q allows %q", cmd, rule, cmd+" evil")
			}
		}
	})
}
