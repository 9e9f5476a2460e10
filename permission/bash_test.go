package permission_test

import (
	"encoding/json"
	"testing"

	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/shell"
)

const (
	cwd  = "/home/u/proj"
	home = "/home/u"
)

func rules(t testing.TB, ss ...string) []permission.Rule {
	t.Helper()
	var out []permission.Rule
	for _, s := range ss {
		r, err := permission.ParseRule(s)
		if err != nil {
			t.Fatalf("ParseRule(%q): %v", s, err)
		}
		out = append(out, r)
	}
	return out
}

func bash(cmd string, mode permission.Mode) permission.Request {
	in, _ := json.Marshal(map[string]string{"command": cmd})
	return permission.Request{Tool: "Bash", Input: in, Cwd: cwd, Mode: mode}
}

// hostile are commands that neither Bash(git status:*) nor the built-in
// read-only set may allow.
var hostile = []string{
	"git status; rm -rf ~",
	"git status && rm -rf ~",
	"git status || rm -rf ~",
	"git status | sh",
	"git status\nrm -rf ~",
	"git status & rm -rf ~",
	"git status $(rm -rf ~)",
	"git status `rm -rf ~`",
	"echo $(rm -rf ~)",
	"cat <(rm -rf ~)",
	"git status > ~/.bashrc",
	"git status >> /etc/x",
	"ls > ~/.bashrc",
	"ls 2> /etc/x",
	"ls &> /etc/x",
	"ls >& /etc/x",
	"ls > $HOME/x",
	`git status"; rm -rf ~"`,
	`git status\;rm`,
	`git status\;rm -rf ~`,
	"'git' status; rm -rf ~",
	`"git" "status" && rm x`,
	"PATH=/tmp git status",
	"LD_PRELOAD=/tmp/x.so git status",
	"GIT_EXTERNAL_DIFF=/tmp/x git status",
	"BASH_ENV=/tmp/x git status",
	"PATH=/tmp; git status",
	"export PATH=/tmp; git status",
	"f(){ rm -rf /; }; f",
	"git(){ rm -rf /; }; git status",
	"function git { rm -rf ~; }; git status",
	"eval git status",
	"eval 'git status; rm -rf ~'",
	"sh -c 'git status'",
	"bash -c \"git status; rm -rf ~\"",
	"exec git status",
	"source ./x.sh",
	". ./x.sh",
	"xargs rm < list",
	"echo x | xargs rm",
	"env rm -rf ~",
	"env git status",
	"command rm -rf ~",
	"sudo git status",
	"timeout 5 rm -rf ~",
	"nohup rm -rf ~",
	"git -c core.pager='rm -rf ~' status",
	"git -c core.fsmonitor=/tmp/x status",
	"git --exec-path=/tmp status",
	"git -C /etc status",
	"git status --output=/etc/passwd",
	"git diff --output=/etc/passwd",
	"git log --output=x",
	"find . -delete",
	"find . -exec rm {} \\;",
	"find . -execdir rm {} +",
	"find . -ok rm {} \\;",
	"find . -fprint /etc/x",
	"cat <<EOF > /etc/x\nhi\nEOF",
	"cat <<EOF\n$(rm -rf ~)\nEOF",
	"cat <<< $(rm -rf ~)",
	"(rm -rf ~)",
	"{ rm -rf ~; }",
	"if true; then rm -rf ~; fi",
	"for f in a; do rm $f; done",
	"while true; do rm -rf ~; done",
	"case x in x) rm -rf ~;; esac",
	"git status | tee /etc/x",
	"ls | tee out.txt",
	"cat /etc/shadow",
	"cat ~/.ssh/id_rsa",
	"cat ../../etc/passwd",
	"ls *",
	"ls {/etc,/root}",
	"$CMD status",
	"${X:-rm} -rf ~",
	"git $X",
	"\\rm -rf ~",
	"/bin/rm -rf ~",
	"./git status",
	"cd / && cat etc/passwd",
	"git branch evil",
	"git branch -D main",
	"git remote add x y",
	"sort -o /etc/x file",
	"rg --pre /tmp/x foo",
	"date -s 2020-01-01",
	"echo $((a[$(rm -rf ~)]))",
	"(( x = 1 ))",
	"[[ $(rm -rf ~) ]]",
	"coproc rm -rf ~",
	"git status 'unterminated",
	"git status )",
	"alias ls='rm -rf ~'; ls",
	"trap 'rm -rf ~' EXIT; git status",
	"git status; $'\\x72\\x6d' -rf ~",
	"IFS=/ git status",
	"git status 3>/etc/x",
	"git status < /etc/shadow",
	// Brace expressions across quoted pieces: bash makes several words.
	`find {".",-maxdepth,0,-exec,touch,p,\;}`,
	`find {"victim",-delete}`,
	`sort {"-o",/tmp/p,.env}`,
	`git status {"x",--output=/tmp/p}`,
	`cat {"/etc/passwd",/dev/null}`,
	// test -v evaluates the index of the variable it names.
	`test -v 'a[$(rm -rf ~)]'`,
}

func TestHostileCommandsNotAllowed(t *testing.T) {
	if len(hostile) < 40 {
		t.Fatalf("corpus has %d commands; want at least 40", len(hostile))
	}
	p := permission.Policy{Allow: rules(t, "Bash(git status:*)"), Home: home, Shell: shell.Parse}
	for _, mode := range []permission.Mode{permission.ModeDefault, permission.ModeAcceptEdits, permission.ModePlan, permission.ModeDontAsk} {
		for _, cmd := range hostile {
			d := p.Check(bash(cmd, mode))
			if d.Behavior == permission.Allow {
				t.Errorf("mode %s: Check(%q) = allow (%s); want ask or deny", mode, cmd, d.Reason)
			}
		}
	}
}

// TestHostileDenyRules checks that a deny rule sees through wrappers,
// paths, quoting and nesting, in every mode including bypass.
func TestHostileDenyRules(t *testing.T) {
	p := permission.Policy{Deny: rules(t, "Bash(rm:*)"), Allow: rules(t, "Bash"), Home: home, Shell: shell.Parse}
	cmds := []string{
		"rm -rf ~", "ls; rm x", "ls && rm x", "ls | rm x", "'rm' x", `r\m x`, `"rm" x`, "/bin/rm x",
		"sudo rm x", "xargs rm", "env rm x", "timeout 5 rm x", "find . -exec rm {} \\;", "echo $(rm x)",
		"cat <(rm x)", "(rm x)", "{ rm x; }", "f(){ rm x; }", "sh -c 'rm x'", "bash -c 'ls; rm x'", "eval rm x",
		"eval 'sh -c \"rm x\"'", "if true; then rm x; fi",
	}
	for _, mode := range permission.Modes() {
		for _, cmd := range cmds {
			if d := p.Check(bash(cmd, mode)); d.Behavior != permission.Deny {
				t.Errorf("mode %s: Check(%q) = %s (%s); want deny", mode, cmd, d.Behavior, d.Reason)
			}
		}
		// Git's global options before the subcommand do not hide it.
		gitDeny := permission.Policy{Deny: rules(t, "Bash(git push:*)"), Allow: rules(t, "Bash(git:*)"), Home: home, Shell: shell.Parse}
		for _, cmd := range []string{"git -C . push --force origin main", "git --no-pager push origin main",
			"git -c a.b=c push origin main", "git --git-dir .git --work-tree . push"} {
			if d := gitDeny.Check(bash(cmd, mode)); d.Behavior != permission.Deny {
				t.Errorf("mode %s: Check(%q) with Bash(git push:*) denied = %s (%s); want deny", mode, cmd, d.Behavior, d.Reason)
			}
		}
		if d := gitDeny.Check(bash("git -C . status", mode)); d.Behavior == permission.Deny {
			t.Errorf("mode %s: git -C . status denied by Bash(git push:*) (%s)", mode, d.Reason)
		}
		// A command name that a brace expression across quoted pieces
		// makes is not known before run time: never allowed, bypass
		// included, since the deny rule cannot see it.
		for _, cmd := range []string{`{"rm",-f,x}`, `{'rm',-f,x}`} {
			if d := p.Check(bash(cmd, mode)); d.Behavior == permission.Allow {
				t.Errorf("mode %s: Check(%q) = allow (%s); want ask or deny", mode, cmd, d.Reason)
			}
		}
	}
}

func TestBashDecisions(t *testing.T) {
	tests := []struct {
		name       string
		allow, ask []string
		deny       []string
		cmd        string
		mode       permission.Mode
		want       permission.Behavior
		rule       string
	}{
		{name: "prefix rule", allow: []string{"Bash(git status:*)"}, cmd: "git status -s", want: permission.Allow, rule: "Bash(git status:*)"},
		{name: "prefix rule no args", allow: []string{"Bash(npm run test:*)"}, cmd: "npm run test", want: permission.Allow, rule: "Bash(npm run test:*)"},
		{name: "prefix is by word", allow: []string{"Bash(git status:*)"}, cmd: "git statusx", want: permission.Ask},
		{name: "prefix is by word 2", allow: []string{"Bash(npm run test:*)"}, cmd: "npm run test:unit", want: permission.Ask},
		{name: "prefix trailing star", allow: []string{"Bash(npm run *)"}, cmd: "npm run build", want: permission.Allow},
		{name: "exact rule", allow: []string{"Bash(npm test)"}, cmd: "npm test", want: permission.Allow, rule: "Bash(npm test)"},
		{name: "exact rule quoted", allow: []string{"Bash(npm test)"}, cmd: "'npm' \"test\"", want: permission.Allow},
		{name: "exact rule extra arg", allow: []string{"Bash(npm test)"}, cmd: "npm test --x", want: permission.Ask},
		{name: "compound all allowed", allow: []string{"Bash(npm test)", "Bash(git status:*)"}, cmd: "npm test && git status", want: permission.Allow},
		{name: "compound one missing", allow: []string{"Bash(npm test)"}, cmd: "npm test && npm publish", want: permission.Ask},
		{name: "read-only set", cmd: "ls -la && cat README.md | wc -l", want: permission.Allow},
		{name: "read-only git", cmd: "git status && git diff HEAD~1 && git log --oneline -5 && git branch -a", want: permission.Allow},
		{name: "read-only find", cmd: "find . -name '*.go' -type f", want: permission.Allow},
		{name: "read-only grep quoted glob", cmd: "grep -rn 'TODO' --include='*.go' .", want: permission.Allow},
		{name: "dev null redirect", cmd: "ls nothing 2>/dev/null", want: permission.Allow},
		{name: "git prefix rule does not cover -c", allow: []string{"Bash(git:*)"}, cmd: "git -c core.fsmonitor='curl x|sh' status", want: permission.Ask},
		{name: "git prefix rule does not cover glued -c", allow: []string{"Bash(git:*)"}, cmd: "git --no-pager -ccore.pager=sh log", want: permission.Ask},
		{name: "git prefix rule does not cover --config-env", allow: []string{"Bash(git:*)"}, cmd: "git --config-env=core.pager=X log", want: permission.Ask},
		{name: "git prefix rule covers a subcommand's -c", allow: []string{"Bash(git:*)"}, cmd: "git commit -c HEAD", want: permission.Allow},
		{name: "dup redirect", cmd: "git status 2>&1 | head -5", want: permission.Allow},
		{name: "allow rule does not cover its redirection", allow: []string{"Bash(npm test)"}, cmd: "npm test > out.log 2>&1", want: permission.Ask},
		{name: "allow rule does not cover a redirection into src", allow: []string{"Bash(npm test)"}, cmd: "npm test > src/a.go", want: permission.Ask},
		{name: "allow rule and acceptEdits cover a redirection inside", allow: []string{"Bash(npm test)"}, cmd: "npm test > out.log 2>&1", mode: permission.ModeAcceptEdits, want: permission.Allow},
		{name: "allow rule and Edit rule cover a redirection", allow: []string{"Bash(npm test)", "Edit(./out.log)"}, cmd: "npm test > out.log", want: permission.Allow},
		{name: "Edit rule for another file does not cover a redirection", allow: []string{"Bash(npm test)", "Edit(./logs/**)"}, cmd: "npm test > out.log", want: permission.Ask},
		{name: "allow rule with dev null redirection", allow: []string{"Bash(npm test)"}, cmd: "npm test > /dev/null 2>&1", want: permission.Allow},
		{name: "allow rule with outside redirection", allow: []string{"Bash(npm test)"}, cmd: "npm test > /tmp/x", mode: permission.ModeAcceptEdits, want: permission.Ask},
		{name: "bare redirection in acceptEdits", cmd: "> out.txt", mode: permission.ModeAcceptEdits, want: permission.Allow},
		{name: "write redirect read-only cmd asks", cmd: "ls > out.txt", want: permission.Ask},
		{name: "write redirect plan asks", allow: []string{"Bash(npm test)"}, cmd: "ls > out.txt", mode: permission.ModePlan, want: permission.Ask},
		{name: "harmless assign", allow: []string{"Bash(npm test)"}, cmd: "CI=1 npm test", want: permission.Allow},
		{name: "deny wins", allow: []string{"Bash(git:*)"}, deny: []string{"Bash(git push:*)"}, cmd: "git status; git push", want: permission.Deny, rule: "Bash(git push:*)"},
		{name: "ask beats allow", allow: []string{"Bash(git:*)"}, ask: []string{"Bash(git push:*)"}, cmd: "git push", want: permission.Ask, rule: "Bash(git push:*)"},
		{name: "deny beats ask", ask: []string{"Bash(git:*)"}, deny: []string{"Bash(git push:*)"}, cmd: "git push", want: permission.Deny},
		{name: "default asks", cmd: "npm publish", want: permission.Ask},
		{name: "dontAsk denies", cmd: "npm publish", mode: permission.ModeDontAsk, want: permission.Deny},
		{name: "dontAsk allows read-only", cmd: "ls", mode: permission.ModeDontAsk, want: permission.Allow},
		{name: "plan denies writes", allow: []string{"Bash(npm test)"}, cmd: "npm test", mode: permission.ModePlan, want: permission.Deny},
		{name: "plan allows reads", cmd: "git log -3", mode: permission.ModePlan, want: permission.Allow},
		{name: "bypass allows", cmd: "npm publish", mode: permission.ModeBypass, want: permission.Allow},
		{name: "bypass keeps deny", deny: []string{"Bash(npm publish:*)"}, cmd: "npm publish --force", mode: permission.ModeBypass, want: permission.Deny},
		{name: "bypass opaque with deny rules asks", deny: []string{"Bash(rm:*)"}, cmd: "eval \"$X\"", mode: permission.ModeBypass, want: permission.Ask},
		{name: "unparseable asks", cmd: "ls 'x", want: permission.Ask},
		{name: "empty asks", cmd: "   ", want: permission.Ask},
		{name: "git status output flag with prefix rule", allow: []string{"Bash(git diff:*)"}, cmd: "git diff --output=x", want: permission.Ask},
		{name: "bash rule whole tool", allow: []string{"Bash"}, cmd: "make build", want: permission.Allow},
		{name: "bash rule whole tool not substitution", allow: []string{"Bash"}, cmd: "make $(whoami)", want: permission.Ask},
		{name: "extra dir read", cmd: "cat /data/x", want: permission.Ask},
		{name: "read deny rule on cat", deny: []string{"Read(./.env)"}, cmd: "cat .env", want: permission.Deny, rule: "Read(./.env)"},
		{name: "read deny rule on flag value", deny: []string{"Read(./.env)"}, cmd: "grep -r x --exclude-from=.env .", want: permission.Deny},
		{name: "read deny rule on input redirect", deny: []string{"Read(./.env)"}, cmd: "wc -l < .env", want: permission.Deny},
		{name: "read deny rule bypass", deny: []string{"Read(./.env)"}, cmd: "head .env", mode: permission.ModeBypass, want: permission.Deny},
		{name: "edit deny rule on redirect", deny: []string{"Edit(.git/**)"}, allow: []string{"Bash"}, cmd: "echo x > .git/config", mode: permission.ModeBypass, want: permission.Deny},
		{name: "read ask rule", ask: []string{"Read(./secrets/**)"}, cmd: "cat secrets/k", want: permission.Ask, rule: "Read(./secrets/**)"},
		{name: "other file not denied", deny: []string{"Read(./.env)"}, cmd: "cat .env.example", want: permission.Allow},
		{name: "acceptEdits redirect inside", cmd: "echo hi > out.txt", mode: permission.ModeAcceptEdits, want: permission.Allow},
		{name: "acceptEdits redirect outside", cmd: "echo hi > /tmp/out.txt", mode: permission.ModeAcceptEdits, want: permission.Ask},
		{name: "default redirect inside", cmd: "echo hi > out.txt", want: permission.Ask},
		{name: "find name is not a command", deny: []string{"Bash(rm:*)"}, cmd: "find . -name rm", want: permission.Allow},
		{name: "bypass opaque with read deny asks", deny: []string{"Read(./.env)"}, cmd: "cat $(echo .env)", mode: permission.ModeBypass, want: permission.Ask},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := permission.Policy{Allow: rules(t, tt.allow...), Ask: rules(t, tt.ask...), Deny: rules(t, tt.deny...), Home: home, Shell: shell.Parse}
			d := p.Check(bash(tt.cmd, tt.mode))
			if d.Behavior != tt.want {
				t.Fatalf("Check(%q) = %s (%s); want %s", tt.cmd, d.Behavior, d.Reason, tt.want)
			}
			if tt.rule != "" && (d.Rule == nil || d.Rule.String() != tt.rule) {
				t.Errorf("Check(%q).Rule = %v; want %s", tt.cmd, d.Rule, tt.rule)
			}
		})
	}
}

// TestBashProtectedWrites checks that commands visibly writing protected
// paths ask whatever allow rules and acceptEdits say, but for
// bypassPermissions.
func TestBashProtectedWrites(t *testing.T) {
	all := []string{"Bash", "Edit"}
	tests := []struct {
		name  string
		allow []string
		cmd   string
		mode  permission.Mode
		want  permission.Behavior
	}{
		{name: "redirect to git config", allow: all, cmd: "echo x > .git/config"},
		{name: "append to a hook", allow: all, cmd: "echo 'curl x | sh' >> .git/hooks/pre-commit"},
		{name: "redirect to nested git info", allow: all, cmd: "echo x > sub/.git/info/attributes"},
		{name: "redirect to troupe settings", allow: all, cmd: "echo '{}' > .troupe/settings.json"},
		{name: "redirect to claude settings", allow: all, cmd: "printf x > .claude/settings.local.json"},
		{name: "redirect to mcp json", allow: all, cmd: "echo x > .mcp.json"},
		{name: "redirect to bashrc", allow: all, cmd: "echo x >> ~/.bashrc"},
		{name: "redirect to project zshenv", allow: all, cmd: "echo x >> .zshenv"},
		{name: "redirect to fish config", allow: all, cmd: "echo x >> ~/.config/fish/config.fish"},
		{name: "redirect to user troupe settings", allow: all, cmd: "echo x > ~/.troupe/settings.json"},
		{name: "redirect to gitattributes", allow: all, cmd: "echo '* filter=x' > .gitattributes"},
		{name: "tee to troupe settings", allow: []string{"Bash(tee:*)"}, cmd: "echo x | tee .troupe/settings.json"},
		{name: "tee append to gitconfig", allow: []string{"Bash(tee:*)"}, cmd: "tee -a ~/.gitconfig < x"},
		{name: "cp into hooks", allow: []string{"Bash(cp:*)"}, cmd: "cp evil.sh .git/hooks/pre-commit"},
		{name: "cp into hooks folder", allow: []string{"Bash(cp:*)"}, cmd: "cp evil.sh .git/hooks/"},
		{name: "cp target directory", allow: []string{"Bash(cp:*)"}, cmd: "cp -t .git/hooks evil.sh"},
		{name: "mv over gitmodules", allow: []string{"Bash(mv:*)"}, cmd: "mv x .gitmodules"},
		{name: "ln into hooks", allow: []string{"Bash(ln:*)"}, cmd: "ln -s ../../evil .git/hooks/post-checkout"},
		{name: "sed in place on git config", allow: []string{"Bash(sed:*)"}, cmd: "sed -i 's/a/b/' .git/config"},
		{name: "sed in place with expression", allow: []string{"Bash(sed:*)"}, cmd: "sed -i.bak -e 's/a/b/' .zshrc"},
		{name: "chmod a hook", allow: []string{"Bash(chmod:*)"}, cmd: "chmod +x .git/hooks/pre-commit"},
		{name: "dd of settings", allow: []string{"Bash(dd:*)"}, cmd: "dd if=x of=.claude/settings.json"},
		{name: "git config sets fsmonitor", allow: []string{"Bash(git:*)"}, cmd: "git config core.fsmonitor 'sh -c evil'"},
		{name: "git config set subcommand", allow: []string{"Bash(git:*)"}, cmd: "git config set core.pager evil"},
		{name: "git config global", allow: []string{"Bash(git:*)"}, cmd: "git config --global alias.st '!evil'"},
		{name: "acceptEdits does not allow", cmd: "echo x > .git/config", mode: permission.ModeAcceptEdits},
		{name: "cd hides the target", allow: all, cmd: "cd .git && echo x > config"},
		{name: "dontAsk denies", allow: all, cmd: "echo x > .git/config", mode: permission.ModeDontAsk, want: permission.Deny},
		{name: "bypass allows", cmd: "echo x > .git/config", mode: permission.ModeBypass, want: permission.Allow},
		{name: "plan still refuses", cmd: "echo x > .git/config", mode: permission.ModePlan, want: permission.Ask},
		{name: "reading git config is fine", cmd: "cat .git/config", want: permission.Allow},
		{name: "git config get is fine", allow: []string{"Bash(git:*)"}, cmd: "git config --get core.pager", want: permission.Allow},
		{name: "git config read of one key is fine", allow: []string{"Bash(git:*)"}, cmd: "git config user.name", want: permission.Allow},
		{name: "cp from git config is fine", allow: []string{"Bash(cp:*)"}, cmd: "cp .git/config backup.txt", want: permission.Allow},
		{name: "sed without -i is fine", allow: []string{"Bash(sed:*)"}, cmd: "sed 's/a/b/' .git/config", want: permission.Allow},
		{name: "redirect elsewhere with acceptEdits is fine", cmd: "echo x > notes.txt", mode: permission.ModeAcceptEdits, want: permission.Allow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.want == "" {
				tt.want = permission.Ask
			}
			p := permission.Policy{Allow: rules(t, tt.allow...), Home: home, Shell: shell.Parse}
			d := p.Check(bash(tt.cmd, tt.mode))
			if d.Behavior != tt.want {
				t.Fatalf("Check(%q) = %s (%s); want %s", tt.cmd, d.Behavior, d.Reason, tt.want)
			}
		})
	}
}

func TestBashExtraDirs(t *testing.T) {
	p := permission.Policy{Home: home, Shell: shell.Parse}
	req := bash("cat /data/x && ls ~/proj/sub", permission.ModeDefault)
	req.Dirs = []string{"/data"}
	if d := p.Check(req); d.Behavior != permission.Allow {
		t.Errorf("Check with Dirs = %s (%s); want allow", d.Behavior, d.Reason)
	}
}

func TestNoShellAsks(t *testing.T) {
	p := permission.Policy{Allow: rules(t, "Bash")}
	if d := p.Check(bash("ls", "")); d.Behavior != permission.Ask {
		t.Errorf("Check without Shell = %s; want ask", d.Behavior)
	}
}

// Where file names differ only in case (macOS, Windows), protected paths
// and deny rules cover every spelling: .CLAUDE/settings.local.json is the
// settings file, and a deny rule for .env covers .ENV. Allow rules are
// not widened.
func TestFoldedPaths(t *testing.T) {
	permission.FoldPaths(t)
	p := permission.Policy{Home: home, Shell: shell.Parse, Deny: rules(t, "Read(./.env)", "Edit(./secrets/**)")}
	for _, cmd := range []string{"echo x > .CLAUDE/settings.local.json", "echo x > .Troupe/settings.json", "echo x > .GIT/hooks/pre-commit", "echo x > .MCP.json"} {
		if d := p.Check(bash(cmd, permission.ModeAcceptEdits)); d.Behavior != permission.Ask {
			t.Errorf("acceptEdits: Check(%q) = %s (%s); want ask", cmd, d.Behavior, d.Reason)
		}
	}
	for _, tt := range []struct{ tool, file string }{{"Read", ".ENV"}, {"Read", ".Env"}, {"Edit", "Secrets/key"}} {
		if d := p.Check(toolReq(tt.tool, map[string]string{"file_path": tt.file}, permission.ModeAcceptEdits)); d.Behavior != permission.Deny {
			t.Errorf("%s %s = %s (%s); want deny", tt.tool, tt.file, d.Behavior, d.Reason)
		}
	}
	allow := permission.Policy{Home: home, Shell: shell.Parse, Allow: rules(t, "Edit(./docs/**)")}
	if d := allow.Check(toolReq("Edit", map[string]string{"file_path": "DOCS/x.md"}, permission.ModeDefault)); d.Behavior == permission.Allow {
		t.Errorf("Edit DOCS/x.md with Edit(./docs/**) allowed (%s): folding must not widen allow rules", d.Reason)
	}
}
