package permission_test

import (
	"testing"

	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/shell"
)

// TestReadOnlyArgs checks that the read-only list judges every argument:
// option forms, glued values, --, files named by options, env.
func TestReadOnlyArgs(t *testing.T) {
	const A, Q = permission.Allow, permission.Ask
	tests := []struct {
		cmd  string
		want permission.Behavior
	}{
		// Option forms.
		{"head -n 5 a", A}, {"head -n5 a", A}, {"head -5 a", A}, {"head --lines=5 a", A}, {"head --lines 5 a", A},
		{"tail -n +5 a", A}, {"ls -la src", A}, {"ls -la --color=auto", A}, {"ls --color always", A}, // "always" is a file: --color takes its value after =
		{"cat --bogus a", Q}, {"cat -Z a", Q}, {"ls -lZq", A}, {"head -q5 a", Q},
		{"sort -o out a", Q}, {"sort -oout a", Q}, {"sort -uo out a", Q}, {"sort --output=out a", Q},
		{"sort --out=out a", Q}, {"sort --compress-program=sh a", Q}, {"sort -T /tmp a", Q}, {"sort -k2,2n -t, a", A},
		{"sort --files0-from=list", Q}, {"wc --files0-from=list", Q}, {"du --files0-from list", Q},
		{"sort --random-source=/etc/x a", Q}, {"sort --random-source=r a", A},
		// Options that read files: the file must be inside.
		{"grep -f pats a", A}, {"grep -fpats a", A}, {"grep -rfpats .", A}, {"grep -f/etc/x a", Q},
		{"grep -f /etc/x a", Q}, {"grep --file=/etc/x a", Q}, {"grep --file /etc/x a", Q}, {"grep -rf/etc/x .", Q},
		{"grep --exclude-from=../x y a", Q}, {"egrep -f ~/x a", Q}, {"rg -f /etc/x y", Q}, {"rg --ignore-file=/etc/x y", Q},
		{"jq --rawfile x /etc/passwd . a.json", Q}, {"jq --rawfile x b.txt . a.json", A}, {"jq --slurpfile x /etc/x .", Q},
		{"jq --arg k /etc/passwd '.[$k]' a.json", A}, {"jq -f /etc/x a.json", Q}, {"jq -f prog.jq a.json", A},
		{"jq -L /tmp . a.json", Q}, {"jq 'import \"x\" as $x; .' a.json", Q}, {"jq -r .name a.json", A},
		{"date -f /etc/x", Q}, {"date --file=/etc/x", Q}, {"date -f dates", A}, {"date -r /etc/x", Q}, {"date -s 1", Q},
		{"date +%s", A}, {"date 0101", Q}, {"hexdump -f /etc/x a", Q}, {"hexdump -C a", A},
		{"diff --to-file=/etc/x a", Q}, {"diff --from-file=b a", A}, {"diff -X /etc/x a b", Q}, {"diff -u a b", A},
		{"file -m /etc/magic a", Q}, {"file -C", Q}, {"strings @/etc/x", Q}, {"sha256sum -c sums", Q},
		// Commands that write or run programs.
		{"find . -fprint x", Q}, {"find . -fls x", Q}, {"find . -exec cat {} +", Q}, {"find . -delete", Q},
		{"find . -newer /etc/x", Q}, {"find . -newer go.mod", A}, {"find . -newermt 2020-01-01", A},
		{"find . -name '*.go' -type f", A}, {"find / -name x", Q}, {"find . -bogus", Q}, {"find . -files0-from x", Q},
		{"rg --pre=sh x", Q}, {"rg --pre sh x", Q}, {"rg -z x", Q}, {"rg --pr=sh x", Q}, {"rg -n --hidden x src", A},
		{"tree -o out", Q}, {"tree -R", Q}, {"tree -L 2 src", A},
		{"xxd a b", Q}, {"xxd a", A}, {"xxd -ps a", A}, {"xxd -ps a b", Q}, {"xxd -l 16 /etc/x", Q},
		{"uniq a b", Q}, {"uniq -c a", A}, {"printf -v PATH /tmp", Q}, {"printf '%s\\n' -v", A},
		// bash evaluates the index of the variable test -v names: a[$(x)] runs x.
		{"test -v 'a[$(touch p)]'", Q}, {"[ -v 'a[$(touch p)]' ]", Q}, {"test -R x", Q}, {"test -f go.mod", A},
		// -- ends options: what follows is an operand, and a path.
		{"cat -- -n", A}, {"sort -- -o", A}, {"cat -- /etc/passwd", Q}, {"grep -- -x a", A},
		{"grep -- x /etc/passwd", Q}, {"ls -- ../x", Q}, {"cat -- -/../../x", Q},
		// Operands are paths wherever they point.
		{"cat ../x", Q}, {"cat src/../../x", Q}, {"cat src/../a", A}, {"cat ~/x", Q}, {"cat ~root/x", Q},
		{"grep /etc/passwd a", A}, {"grep -e x /etc/passwd", Q}, {"grep -r x /etc", Q}, {"basename /etc/passwd", A},
		// Environment.
		{"LC_ALL=C sort a", A}, {"LANG=C.UTF-8 grep x a", A}, {"TZ=Europe/Berlin date", A}, {"TZ=:/etc/x date", Q},
		{"LC_ALL=/tmp/x ls", Q}, {"FOO=1 cat a", Q}, {"RIPGREP_CONFIG_PATH=rc rg x", Q}, {"GREP_OPTIONS=-r grep x a", Q},
		{"PAGER=sh git log", Q}, {"LESSOPEN='|x' cat a", Q}, {"TAR_OPTIONS=x ls", Q}, {"GIT_DIR=/x git log", Q},
		{"export PAGER=sh; git log", Q}, {"export RIPGREP_CONFIG_PATH=rc; rg x", Q}, {"X=$(id) ls", Q},
	}
	p := permission.Policy{Home: home, Shell: shell.Parse}
	for _, tt := range tests {
		if d := p.Check(bash(tt.cmd, permission.ModeDefault)); d.Behavior != tt.want {
			t.Errorf("Check(%q) = %s (%s); want %s", tt.cmd, d.Behavior, d.Reason, tt.want)
		}
	}
}

// TestReadOnlyGit checks git's global options and read-only subcommands.
func TestReadOnlyGit(t *testing.T) {
	const A, Q = permission.Allow, permission.Ask
	tests := []struct {
		cmd  string
		want permission.Behavior
	}{
		{"git status", A}, {"git status -sb", A}, {"git status --porcelain=v2 -uno", A}, {"git status --bogus", Q},
		{"git status --output=x", Q}, {"git diff", A}, {"git diff --cached --stat", A}, {"git diff HEAD~1 -- src", A},
		{"git diff --output=x", Q}, {"git diff --ext-diff", Q}, {"git diff --textconv", Q}, {"git diff --no-ext-diff", A},
		{"git diff -O/etc/x", Q}, {"git diff -O order", A}, {"git diff --no-index /etc/passwd a", Q},
		{"git diff --outp=x", Q}, {"git log --oneline -5", A}, {"git log -n 3 --format=%h", A}, {"git log -S foo", A},
		{"git log --output=x", Q}, {"git log --show-signature", Q}, {"git log -L 1,5:a.go", A}, {"git log -L 1,5:/etc/x", Q},
		{"git log -- /etc/passwd", Q}, {"git show HEAD", A}, {"git show --output=x HEAD", Q}, {"git show HEAD:../x", Q},
		{"git blame a.go", A}, {"git blame --contents b a.go", A}, {"git blame --contents /etc/x a.go", Q},
		{"git blame -S /etc/x a", Q}, {"git blame --ignore-revs-file=/etc/x a", Q},
		{"git -c core.pager=sh log", Q}, {"git -ccore.pager=sh log", Q}, {"git -C sub status", A}, {"git -C /etc status", Q},
		{"git -C .. log", Q}, {"git -C sub -C ../.. log", Q}, {"git --no-pager log -3", A}, {"git -P diff", A},
		{"git --git-dir=/x log", Q}, {"git --exec-path=/x status", Q}, {"git -p log", Q}, {"git", Q},
		{"git remote", A}, {"git remote -v", A}, {"git remote get-url origin", A}, {"git remote show origin", Q},
		{"git remote add x y", Q}, {"git branch", A}, {"git branch -a", A}, {"git branch x", Q}, {"git branch -D x", Q},
		{"git rev-parse --show-toplevel", A}, {"git rev-parse --resolve-git-dir /etc", Q}, {"git ls-files -X /etc/x", Q},
		{"git describe --tags", A}, {"git cat-file -p HEAD:a", Q}, {"git config -l", Q}, {"git push", Q},
	}
	p := permission.Policy{Home: home, Shell: shell.Parse, Stat: project}
	for _, tt := range tests {
		if d := p.Check(bash(tt.cmd, permission.ModeDefault)); d.Behavior != tt.want {
			t.Errorf("Check(%q) = %s (%s); want %s", tt.cmd, d.Behavior, d.Reason, tt.want)
		}
	}
}

// TestPrefixRuleOptions checks that a prefix rule does not cover options
// that write or run programs, glued or abbreviated.
func TestPrefixRuleOptions(t *testing.T) {
	tests := []struct {
		rule, cmd string
		want      permission.Behavior
	}{
		{"Bash(sort:*)", "sort -u /etc/x", permission.Allow},
		{"Bash(sort:*)", "sort -oout a", permission.Ask},
		{"Bash(sort:*)", "sort -uo out a", permission.Ask},
		{"Bash(sort:*)", "sort --out=x a", permission.Ask},
		{"Bash(sort:*)", "sort --compress-prog=sh a", permission.Ask},
		{"Bash(git diff:*)", "git diff --textconv", permission.Ask},
		{"Bash(git diff:*)", "git diff --output=x", permission.Ask},
		{"Bash(git diff:*)", "git diff --stat", permission.Allow},
		{"Bash(rg:*)", "rg --pre=sh x", permission.Ask},
		{"Bash(find:*)", "find . -fprint x", permission.Ask},
	}
	for _, tt := range tests {
		p := permission.Policy{Allow: rules(t, tt.rule), Home: home, Shell: shell.Parse}
		if d := p.Check(bash(tt.cmd, permission.ModeDefault)); d.Behavior != tt.want {
			t.Errorf("rule %s: Check(%q) = %s (%s); want %s", tt.rule, tt.cmd, d.Behavior, d.Reason, tt.want)
		}
	}
}

// TestReadDenyReach checks that Read deny and ask rules apply to what
// commands read: named files deny, and folders read whole that may hold
// a matching file ask.
func TestReadDenyReach(t *testing.T) {
	const A, Q, D = permission.Allow, permission.Ask, permission.Deny
	tests := []struct {
		deny, ask string
		cmd       string
		mode      permission.Mode
		want      permission.Behavior
	}{
		{deny: "Read(./.env)", cmd: "cat a .env", want: D},
		{deny: "Read(./.env)", cmd: "grep x .env", want: D},
		{deny: "Read(./.env)", cmd: "grep -e x -- .env", want: D},
		{deny: "Read(./.env)", cmd: "grep -r x .", want: Q},
		{deny: "Read(./.env)", cmd: "grep -rn x", want: Q},
		{deny: "Read(./.env)", cmd: "grep -d recurse x .", want: Q},
		{deny: "Read(./.env)", cmd: "grep -r x src", want: A},
		{deny: "Read(./.env)", cmd: "grep x src/a.go", want: A},
		{deny: "Read(./.env)", cmd: "rg x", want: Q},
		{deny: "Read(./.env)", cmd: "rg x src", want: A},
		{deny: "Read(./.env)", cmd: "diff -r . ../other", want: Q},
		{deny: "Read(./.env)", cmd: "cat *", mode: permission.ModeBypass, want: Q},
		{deny: "Read(./.env)", cmd: "cat src/*.go", mode: permission.ModeBypass, want: A},
		{deny: "Read(./.env)", cmd: "F=.env; cat $F", mode: permission.ModeBypass, want: Q},
		{deny: "Read(./.env)", cmd: "less .env", mode: permission.ModeBypass, want: D},
		{deny: "Read(./.env)", cmd: "cp .env x", mode: permission.ModeBypass, want: D},
		{deny: "Read(./.env)", cmd: "git show :.env", want: D},
		{deny: "Read(./.env)", cmd: "git show HEAD:.env", want: D},
		{deny: "Read(./.env)", cmd: "git show main~2:./.env", want: D},
		{deny: "Read(./.env)", cmd: "git show :0:.env", want: D},
		{deny: "Read(./.env)", cmd: "git show HEAD:src/a.go", want: A},
		{deny: "Read(./.env)", cmd: "git diff -- .env", want: D},
		{deny: "Read(./.env)", cmd: "git diff .env", want: D},
		{deny: "Read(./.env)", cmd: "git log -p -- .env", want: D},
		{deny: "Read(./.env)", cmd: "git blame .env", want: D},
		{deny: "Read(./.env)", cmd: "git cat-file -p HEAD:.env", mode: permission.ModeBypass, want: D},
		{deny: "Read(./.env)", cmd: "git cat-file -p 1234abcd", mode: permission.ModeBypass, want: Q},
		{deny: "Read(./.env)", cmd: "git -C sub show HEAD:../.env", want: D},
		{deny: "Read(./.env)", cmd: "git diff", want: Q},
		{deny: "Read(./.env)", cmd: "git diff HEAD~1", want: Q},
		{deny: "Read(./.env)", cmd: "git diff --stat", want: A},
		{deny: "Read(./.env)", cmd: "git diff -- src", want: A},
		{deny: "Read(./.env)", cmd: "git log -p", want: Q},
		{deny: "Read(./.env)", cmd: "git log -S secret", want: Q},
		{deny: "Read(./.env)", cmd: "git log --oneline -5", want: A},
		{deny: "Read(./.env)", cmd: "git show HEAD", want: Q},
		{deny: "Read(./.env)", cmd: "git show -s HEAD", want: A},
		{deny: "Read(./.env)", cmd: "git status", want: A},
		{deny: "Read(./.env)", cmd: "git diff", mode: permission.ModeBypass, want: Q},
		{deny: "Read(./.env)", cmd: "ls -la", want: A},
		{deny: "Read(./.env)", cmd: "find . -name '*.go'", want: A},
		{deny: "Read(*.pem)", cmd: "grep -r x src", want: Q},
		{deny: "Read(~/.ssh/**)", cmd: "rg x", want: A},
		{deny: "Read", cmd: "rg x", want: Q},
		{ask: "Read(./secrets/**)", cmd: "rg x", want: Q},
		{ask: "Read(./secrets/**)", cmd: "rg x src", want: A},
		{ask: "Read(./secrets/**)", cmd: "rg x", mode: permission.ModeBypass, want: A},
	}
	for _, tt := range tests {
		p := permission.Policy{Home: home, Shell: shell.Parse}
		if tt.deny != "" {
			p.Deny = rules(t, tt.deny)
		}
		if tt.ask != "" {
			p.Ask = rules(t, tt.ask)
		}
		d := p.Check(bash(tt.cmd, tt.mode))
		if d.Behavior != tt.want {
			t.Errorf("deny %q ask %q mode %q: Check(%q) = %s (%s); want %s", tt.deny, tt.ask, tt.mode, tt.cmd, d.Behavior, d.Reason, tt.want)
		}
		if d.Behavior != permission.Allow && d.Rule == nil && tt.want != A {
			t.Errorf("Check(%q) = %s (%s) without the rule", tt.cmd, d.Behavior, d.Reason)
		}
	}
}
