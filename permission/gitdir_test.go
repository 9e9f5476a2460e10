package permission_test

import (
	"encoding/json"
	"path"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/shell"
)

// fakeStat is a Policy.Stat over the absolute paths given (a trailing /
// makes a folder) and their ancestors (folders).
func fakeStat(paths ...string) func(string) (bool, bool) {
	files := map[string]bool{} // path -> is a folder
	for _, p := range paths {
		dir := strings.HasSuffix(p, "/")
		p = path.Clean(p)
		files[p] = files[p] || dir
		for d := path.Dir(p); ; d = path.Dir(d) {
			files[d] = true
			if d == "/" {
				break
			}
		}
	}
	return func(abs string) (bool, bool) {
		dir, ok := files[path.Clean(abs)]
		return ok, dir
	}
}

// project is the cloned project of these tests: its own repository
// (.git), a plain folder, and evil, the git directory it ships as plain
// files.
var project = fakeStat(cwd+"/.git/", cwd+"/sub/", cwd+"/evil/HEAD", cwd+"/evil/config", cwd+"/evil/objects/", cwd+"/evil/refs/",
	cwd+"/half/objects/", cwd+"/half/refs/", cwd+"/sub/inner/.git")

func TestGitOtherRepository(t *testing.T) {
	const A, Q = permission.Allow, permission.Ask
	tests := []struct {
		rule, cmd string
		want      permission.Behavior
	}{
		{"", "git -C sub status", A},
		{"", "git -C . log", A},
		{"", "git -C sub -C .. log", A},
		{"", "git -C evil status", Q},
		{"", "git -C evil/objects status", Q},
		{"", "git -C ./evil/ log --oneline", Q},
		{"", "git -C sub/inner status", Q}, // a nested repository
		{"", "git -C sub/inner/.. status", A},
		{"", "git --git-dir=evil status", Q},
		{"", "git --git-dir evil status", Q},
		{"", "git --work-tree=. --git-dir=evil status", Q},
		{"", "GIT_DIR=evil git status", Q},
		{"", "GIT_WORK_TREE=. GIT_DIR=evil git status", Q},
		{"", "git --bare status", Q},
		{"", "git -c core.fsmonitor=x status", Q},
		{"", "git --config-env=core.fsmonitor=X status", Q},
		{"Bash(git:*)", "git -C sub status", A},
		{"Bash(git:*)", "git -C evil status", Q},
		{"Bash(git:*)", "git -C sub -C ../evil status", Q},
		{"Bash(git:*)", "git -C . -c core.fsmonitor=x status", Q},
		{"Bash(git:*)", "git -C . -c alias.st=!sh st", Q},
		{"Bash(git:*)", "git -c core.sshCommand=x fetch", Q},
		{"Bash(git:*)", "git -c core.pager=x log", Q},
		{"Bash(git:*)", "git --config-env=core.pager=X log", Q},
		{"Bash(git:*)", "git --bare status", Q},
		{"Bash(git:*)", "git --exec-path=/tmp status", Q},
		{"Bash(git:*)", "git --git-dir=evil status", Q},
		{"Bash(git:*)", "git --work-tree=. status", Q},
		{"Bash(git:*)", "GIT_DIR=evil git status", Q},
		{"Bash(git status:*)", "git -C evil status", Q},
		{"Bash(git status:*)", "git status", A},
		{"Bash(git -C evil status)", "git -C evil status", A}, // named word for word
	}
	for _, mode := range []permission.Mode{permission.ModeDefault, permission.ModeAcceptEdits, permission.ModePlan} {
		for _, tt := range tests {
			p := permission.Policy{Home: home, Shell: shell.Parse, Stat: project}
			if tt.rule != "" {
				p.Allow = rules(t, tt.rule)
			}
			want := tt.want
			if mode == permission.ModePlan && want == Q {
				want = permission.Deny
			}
			if mode == permission.ModePlan && tt.rule != "" {
				continue // rules do not widen plan mode
			}
			if d := p.Check(bash(tt.cmd, mode)); d.Behavior != want {
				t.Errorf("mode %s, rule %q: Check(%q) = %s (%s); want %s", mode, tt.rule, tt.cmd, d.Behavior, d.Reason, want)
			}
		}
	}
}

// Without Stat nothing tells a nested repository from a folder: git -C
// asks for anything but the working directory itself.
func TestGitOtherRepositoryNoStat(t *testing.T) {
	p := permission.Policy{Home: home, Shell: shell.Parse}
	for cmd, want := range map[string]permission.Behavior{"git -C sub status": permission.Ask, "git -C . status": permission.Allow, "git -C sub/.. log": permission.Allow} {
		if d := p.Check(bash(cmd, permission.ModeDefault)); d.Behavior != want {
			t.Errorf("Check(%q) = %s (%s); want %s", cmd, d.Behavior, d.Reason, want)
		}
	}
}

func write(tool, file string, mode permission.Mode) permission.Request {
	in, _ := json.Marshal(map[string]string{"file_path": file, "content": "x"})
	return permission.Request{Tool: tool, Input: in, Cwd: cwd, Mode: mode}
}

// Writes that make or change a git directory ask in acceptEdits mode (and
// under an Edit allow rule), as writes below .git do.
func TestGitDirProtected(t *testing.T) {
	p := permission.Policy{Home: home, Shell: shell.Parse, Stat: project, Allow: rules(t, "Edit(./**)")}
	asks := []string{"evil/config", "evil/HEAD", "evil/objects/ab/cdef", "evil/refs/heads/main", "evil/hooks/pre-commit",
		"new/HEAD", "sub/HEAD", "half/config", "half/commondir", "./evil/info/../config"}
	fine := []string{"sub/config", "src/objects/x.go", "half/objects/x", "half/README", "sub/HEADER.md"}
	for _, mode := range []permission.Mode{permission.ModeDefault, permission.ModeAcceptEdits} {
		for _, f := range asks {
			for _, tool := range []string{"Write", "Edit"} {
				if d := p.Check(write(tool, f, mode)); d.Behavior != permission.Ask {
					t.Errorf("mode %s: %s %s = %s (%s); want ask", mode, tool, f, d.Behavior, d.Reason)
				}
			}
		}
		for _, f := range fine {
			if d := p.Check(write("Write", f, mode)); d.Behavior != permission.Allow {
				t.Errorf("mode %s: Write %s = %s (%s); want allow", mode, f, d.Behavior, d.Reason)
			}
		}
		for _, cmd := range []string{"echo 'ref: refs/heads/main' > new/HEAD", "printf '[core]' > evil/config", "echo x >> half/config",
			"cat a > evil/objects/x", "cp a evil/config", "tee new/HEAD < a", "mkdir -p evil/hooks", "touch evil/refs/x", "mv a sub/HEAD"} {
			if d := p.Check(bash(cmd, mode)); d.Behavior == permission.Allow {
				t.Errorf("mode %s: Check(%q) = allow (%s); want ask", mode, cmd, d.Reason)
			}
		}
	}
}

// A worktree of the project at /home/u/proj, at /home/u/wt/bob: the
// project's rules, anchored at the project, hold in the worktree's copy.
func TestFollow(t *testing.T) {
	const wt = "/home/u/wt/bob"
	base := permission.Policy{Home: home, Shell: shell.Parse}
	for _, list := range []struct {
		into  *[]permission.Rule
		rules []string
	}{
		{&base.Deny, []string{"Read(./secret.txt)", "Read(//home/u/proj/abs.txt)", "Read(~/proj/home.txt)", "Read(*.pem)", "Edit(/locked/**)"}},
		{&base.Ask, []string{"Read(./ask.txt)"}},
		{&base.Allow, []string{"Edit(./src/**)", "Read(//etc/hosts)"}},
	} {
		for _, s := range list.rules {
			r := permission.MustParseRule(s)
			r.Base = cwd
			*list.into = append(*list.into, r)
		}
	}
	p := base.Follow(cwd, wt)
	read := func(f string) permission.Request {
		in, _ := json.Marshal(map[string]string{"file_path": f})
		return permission.Request{Tool: "Read", Input: in, Cwd: wt, Mode: permission.ModeAcceptEdits}
	}
	for f, want := range map[string]permission.Behavior{
		wt + "/secret.txt": permission.Deny, wt + "/abs.txt": permission.Deny, wt + "/home.txt": permission.Deny,
		wt + "/x/key.pem": permission.Deny, wt + "/ask.txt": permission.Ask, wt + "/other.txt": permission.Allow,
		cwd + "/secret.txt": permission.Deny, "/etc/hosts": permission.Allow,
	} {
		if d := p.Check(read(f)); d.Behavior != want {
			t.Errorf("Read %s in the worktree = %s (%s); want %s", f, d.Behavior, d.Reason, want)
		}
	}
	for f, want := range map[string]permission.Behavior{wt + "/locked/a": permission.Deny, wt + "/src/a.go": permission.Allow} {
		if d := p.Check(write("Edit", f, permission.ModeDefault)); d.Behavior != want {
			t.Errorf("Edit %s in the worktree = %s (%s); want %s", f, d.Behavior, d.Reason, want)
		}
	}
	for _, cmd := range []string{"cat secret.txt", "grep x secret.txt", "cat ./sub/../secret.txt", "head abs.txt"} {
		in, _ := json.Marshal(map[string]string{"command": cmd})
		if d := p.Check(permission.Request{Tool: "Bash", Input: in, Cwd: wt}); d.Behavior != permission.Deny {
			t.Errorf("Bash %q in the worktree = %s (%s); want deny", cmd, d.Behavior, d.Reason)
		}
	}
	if !p.DeniesRead(wt+"/secret.txt", wt) {
		t.Error("DeniesRead(worktree's secret.txt) = false; want true (Grep and Glob withhold it)")
	}
	if base.DeniesRead(wt+"/secret.txt", wt) {
		t.Error("the policy before Follow denies the worktree's secret.txt: the test shows nothing")
	}
}
