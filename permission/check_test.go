package permission_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/permission"
)

func toolReq(tool string, in map[string]string, mode permission.Mode) permission.Request {
	b, _ := json.Marshal(in)
	return permission.Request{Tool: tool, Input: b, Cwd: cwd, Mode: mode}
}

func TestToolDecisions(t *testing.T) {
	fp := func(p string) map[string]string { return map[string]string{"file_path": p} }
	tests := []struct {
		name             string
		allow, ask, deny []string
		tool             string
		in               map[string]string
		mode             permission.Mode
		dirs             []string
		want             permission.Behavior
		rule             string
	}{
		{name: "read inside", tool: "Read", in: fp("src/a.go"), want: permission.Allow},
		{name: "read inside abs", tool: "Read", in: fp(cwd + "/a.go"), want: permission.Allow},
		{name: "read outside", tool: "Read", in: fp("/etc/passwd"), want: permission.Ask},
		{name: "read dotdot", tool: "Read", in: fp("../other/x"), want: permission.Ask},
		{name: "read prefix sibling", tool: "Read", in: fp("/home/u/projx/a"), want: permission.Ask},
		{name: "read extra dir", tool: "Read", in: fp("/data/x"), dirs: []string{"/data"}, want: permission.Allow},
		{name: "glob inside", tool: "Glob", in: map[string]string{"pattern": "**/*.go"}, want: permission.Allow},
		{name: "glob escaping", tool: "Glob", in: map[string]string{"pattern": "../../**/*"}, want: permission.Ask},
		{name: "glob absolute", tool: "Glob", in: map[string]string{"pattern": "/etc/*"}, want: permission.Ask},
		{name: "grep outside", tool: "Grep", in: map[string]string{"pattern": "x", "path": "/etc"}, want: permission.Ask},
		{name: "grep default path", tool: "Grep", in: map[string]string{"pattern": "x"}, want: permission.Allow},
		{name: "deny read", tool: "Read", deny: []string{"Read(./.env)"}, in: fp(".env"), want: permission.Deny, rule: "Read(./.env)"},
		{name: "deny read any depth", tool: "Read", deny: []string{"Read(*.pem)"}, in: fp("a/b/key.pem"), want: permission.Deny},
		{name: "deny read covers grep", tool: "Grep", deny: []string{"Read(./secrets/**)"}, in: map[string]string{"pattern": "x", "path": "secrets/k"}, want: permission.Deny},
		{name: "deny dir covers files", tool: "Read", deny: []string{"Read(./secrets)"}, in: fp("secrets/a/b"), want: permission.Deny},
		{name: "allow read outside", tool: "Read", allow: []string{"Read(//etc/**)"}, in: fp("/etc/hosts"), want: permission.Allow, rule: "Read(//etc/**)"},
		{name: "allow home", tool: "Read", allow: []string{"Read(~/notes/**)"}, in: fp("~/notes/a.md"), want: permission.Allow},
		{name: "edit default asks", tool: "Edit", in: fp("a.go"), want: permission.Ask},
		{name: "tool search needs no approval", tool: "ToolSearch", in: map[string]string{"query": "select:x"}, want: permission.Allow},
		{name: "tool search in plan mode", tool: "ToolSearch", in: map[string]string{"query": "x"}, mode: permission.ModePlan, want: permission.Allow},
		{name: "tool search denied by rule", tool: "ToolSearch", deny: []string{"ToolSearch"}, in: map[string]string{"query": "x"}, want: permission.Deny},
		{name: "enter plan mode asks", tool: "EnterPlanMode", in: map[string]string{}, want: permission.Ask},
		{name: "write default asks", tool: "Write", in: fp("a.go"), want: permission.Ask},
		{name: "edit acceptEdits inside", tool: "Edit", in: fp("a.go"), mode: permission.ModeAcceptEdits, want: permission.Allow},
		{name: "write acceptEdits outside", tool: "Write", in: fp("/etc/x"), mode: permission.ModeAcceptEdits, want: permission.Ask},
		{name: "edit rule covers write", tool: "Write", allow: []string{"Edit(docs/**)"}, in: fp("docs/a.md"), want: permission.Allow, rule: "Edit(docs/**)"},
		{name: "edit rule anchored", tool: "Write", allow: []string{"Edit(docs/**)"}, in: fp("src/docs/a.md"), want: permission.Ask},
		{name: "edit rule slash anchored", tool: "Edit", allow: []string{"Edit(/src/**/*.go)"}, in: fp("src/a/b.go"), want: permission.Allow},
		{name: "ask rule beats allow", tool: "Edit", allow: []string{"Edit"}, ask: []string{"Edit(*.lock)"}, in: fp("go.lock"), want: permission.Ask, rule: "Edit(*.lock)"},
		{name: "deny beats allow", tool: "Edit", allow: []string{"Edit"}, deny: []string{"Edit(.git/**)"}, in: fp(".git/config"), want: permission.Deny},
		{name: "plan refuses edit", tool: "Edit", allow: []string{"Edit"}, in: fp("a.go"), mode: permission.ModePlan, want: permission.Deny},
		{name: "plan allows read", tool: "Read", in: fp("a.go"), mode: permission.ModePlan, want: permission.Allow},
		{name: "bypass allows", tool: "Write", in: fp("/etc/x"), mode: permission.ModeBypass, want: permission.Allow},
		{name: "bypass keeps deny", tool: "Write", deny: []string{"Edit(//etc/**)"}, in: fp("/etc/x"), mode: permission.ModeBypass, want: permission.Deny},
		{name: "bypass skips ask rules", tool: "Write", ask: []string{"Edit"}, in: fp("a"), mode: permission.ModeBypass, want: permission.Allow},
		{name: "dontAsk denies", tool: "Write", in: fp("a"), mode: permission.ModeDontAsk, want: permission.Deny},
		{name: "webfetch domain", tool: "WebFetch", allow: []string{"WebFetch(domain:example.com)"}, in: map[string]string{"url": "https://example.com/x"}, want: permission.Allow},
		{name: "webfetch other domain", tool: "WebFetch", allow: []string{"WebFetch(domain:example.com)"}, in: map[string]string{"url": "https://example.com.evil.io/x"}, want: permission.Ask},
		{name: "webfetch wildcard", tool: "WebFetch", allow: []string{"WebFetch(domain:*.example.com)"}, in: map[string]string{"url": "https://api.example.com/x"}, want: permission.Allow},
		{name: "mcp exact", tool: "mcp__gh__list", allow: []string{"mcp__gh__list"}, want: permission.Allow},
		{name: "mcp server star", tool: "mcp__gh__create", allow: []string{"mcp__gh__*"}, want: permission.Allow},
		{name: "mcp server", tool: "mcp__gh__create", allow: []string{"mcp__gh"}, want: permission.Allow},
		{name: "mcp other server", tool: "mcp__ghx__create", allow: []string{"mcp__gh__*"}, want: permission.Ask},
		{name: "mcp deny", tool: "mcp__gh__create", allow: []string{"mcp__gh__*"}, deny: []string{"mcp__gh__create"}, want: permission.Deny},
		{name: "bad input asks", tool: "Read", in: nil, want: permission.Ask},
		{name: "unknown tool plan", tool: "Other", mode: permission.ModePlan, want: permission.Deny},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := permission.Policy{Allow: rules(t, tt.allow...), Ask: rules(t, tt.ask...), Deny: rules(t, tt.deny...), Home: home}
			req := toolReq(tt.tool, tt.in, tt.mode)
			if tt.in == nil {
				req.Input = json.RawMessage(`{}`)
			}
			req.Dirs = tt.dirs
			d := p.Check(req)
			if d.Behavior != tt.want {
				t.Fatalf("Check(%s %v) = %s (%s); want %s", tt.tool, tt.in, d.Behavior, d.Reason, tt.want)
			}
			if tt.rule != "" && (d.Rule == nil || d.Rule.String() != tt.rule) {
				t.Errorf("Check(%s %v).Rule = %v; want %s", tt.tool, tt.in, d.Rule, tt.rule)
			}
		})
	}
}

func TestRuleBase(t *testing.T) {
	r := permission.MustParseRule("Edit(./docs/**)")
	r.Base = "/repo"
	p := permission.Policy{Allow: []permission.Rule{r}}
	in, _ := json.Marshal(map[string]string{"file_path": "/repo/docs/x.md"})
	req := permission.Request{Tool: "Edit", Input: in, Cwd: "/elsewhere"}
	if d := p.Check(req); d.Behavior != permission.Allow {
		t.Errorf("Check with Base = %s (%s); want allow", d.Behavior, d.Reason)
	}
}

func TestParseRule(t *testing.T) {
	tests := []struct {
		in, tool, spec string
		err            string
	}{
		{in: "Bash", tool: "Bash"},
		{in: "Bash(npm run test:*)", tool: "Bash", spec: "npm run test:*"},
		{in: "Bash(git status)", tool: "Bash", spec: "git status"},
		{in: "Bash(*)", tool: "Bash"},
		{in: " Read(./src/**) ", tool: "Read", spec: "./src/**"},
		{in: "Edit(docs/**)", tool: "Edit", spec: "docs/**"},
		{in: "WebFetch(domain:example.com)", tool: "WebFetch", spec: "domain:example.com"},
		{in: "mcp__server__tool", tool: "mcp__server__tool"},
		{in: "mcp__server__*", tool: "mcp__server__*"},
		{in: "", err: "empty tool name"},
		{in: "Bash(", err: "missing closing"},
		{in: "Bash)", err: "unbalanced"},
		{in: "Bash()", err: "empty specifier"},
		{in: "Bash(git * main)", err: "wildcard"},
		{in: "Bash(ls; rm)", err: "shell operator"},
		{in: "Bash('x)", err: "unterminated"},
		{in: "Read([)", err: "bad glob"},
		{in: "Read(~root/x)", err: "~user"},
		{in: "WebFetch(example.com)", err: "domain:"},
		{in: "mcp__s__t(x)", err: "no specifier"},
		{in: "Ba sh", err: "invalid character"},
		{in: "Bash*", err: "invalid character"},
	}
	for _, tt := range tests {
		r, err := permission.ParseRule(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseRule(%q) error = %v; want one containing %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || r.Tool != tt.tool || r.Specifier != tt.spec {
			t.Errorf("ParseRule(%q) = %+v, %v; want %s(%s)", tt.in, r, err, tt.tool, tt.spec)
		}
	}
}

func TestParseMode(t *testing.T) {
	for _, m := range permission.Modes() {
		if got, err := permission.ParseMode(string(m)); err != nil || got != m {
			t.Errorf("ParseMode(%q) = %q, %v", m, got, err)
		}
	}
	if _, err := permission.ParseMode("auto"); err == nil {
		t.Error("ParseMode(auto) = nil error; want one")
	}
}

// FuzzParseRule checks that the rule parser never panics, that a parsed
// rule prints to a string that parses back to the same rule, and that
// Check on it never panics.
func FuzzParseRule(f *testing.F) {
	for _, s := range []string{"Bash", "Bash(npm run test:*)", "Bash(git status)", "Read(./src/**)", "Edit(docs/**)",
		"WebFetch(domain:example.com)", "mcp__server__*", "Read(//etc/**)", "Read(~/x)", `Bash(echo "a b")`, "Bash(a\\ b:*)", "Read(**/[a-)",
		`Bash(python3 \*)`, `Bash(git log :\*)`, `Bash(git log ':*')`, "Edit(//w/[*].go)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := permission.ParseRule(s)
		if err != nil {
			return
		}
		r2, err := permission.ParseRule(r.String())
		if err != nil || r2 != r {
			t.Fatalf("ParseRule(%q) = %+v; reparse of %q = %+v, %v", s, r, r.String(), r2, err)
		}
		p := permission.Policy{Allow: []permission.Rule{r}, Deny: []permission.Rule{r}, Home: home}
		for _, req := range []permission.Request{
			toolReq(r.Tool, map[string]string{"file_path": "a/b", "url": "https://example.com", "command": "ls"}, ""),
			bash("git status", ""),
		} {
			_ = p.Check(req)
		}
	})
}
