package permission_test

import (
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/shell"
)

// fakeLinks is a Realpath over a table of symbolic links (link path ->
// target), resolved prefix by prefix as the kernel would.
func fakeLinks(links map[string]string) func(string) string {
	return func(abs string) string {
		for range 10 {
			changed := false
			for l, target := range links {
				if abs == l || strings.HasPrefix(abs, l+"/") {
					abs = target + abs[len(l):]
					changed = true
				}
			}
			if !changed {
				break
			}
		}
		return abs
	}
}

var links = map[string]string{
	cwd + "/src/link":  "/etc",               // a folder link leading outside
	cwd + "/src/cfg":   cwd + "/.git/config", // a file link to a protected file
	cwd + "/notes":     "/data/notes",        // a folder link to an extra dir
	cwd + "/env-copy":  cwd + "/.env",        // a link to a denied file
	"/data/in-project": cwd + "/src",         // a link from outside to inside
	home + "/dotfiles": cwd + "/dot",         // a link from the home into the project
}

func TestRealPaths(t *testing.T) {
	fp := func(p string) map[string]string { return map[string]string{"file_path": p} }
	tests := []struct {
		name        string
		allow, deny []string
		tool        string
		in          map[string]string
		mode        permission.Mode
		dirs        []string
		want        permission.Behavior
	}{
		{name: "read through a link leading outside", tool: "Read", in: fp("src/link/passwd"), want: permission.Ask},
		{name: "write through a link leading outside", tool: "Write", in: fp("src/link/x"), mode: permission.ModeAcceptEdits, want: permission.Ask},
		{name: "new folders below a link leading outside", tool: "Write", in: fp("src/link/new/dir/x"), mode: permission.ModeAcceptEdits, want: permission.Ask},
		{name: "glob below a link leading outside", tool: "Glob", in: map[string]string{"pattern": "src/link/**"}, want: permission.Ask},
		{name: "grep below a link leading outside", tool: "Grep", in: map[string]string{"pattern": "root", "path": "src/link"}, want: permission.Ask},
		{name: "write through a link to git config", tool: "Write", in: fp("src/cfg"), mode: permission.ModeAcceptEdits, want: permission.Ask},
		{name: "edit rule does not allow a link to git config", tool: "Edit", allow: []string{"Edit(./src/**)"}, in: fp("src/cfg"), want: permission.Ask},
		{name: "allow rule as written does not follow a link outside", tool: "Edit", allow: []string{"Edit(./src/**)"}, in: fp("src/link/x"), want: permission.Ask},
		{name: "allow rule naming the link allows its real target", tool: "Edit", allow: []string{"Edit(./src/link/**)"}, in: fp("src/link/x"), want: permission.Allow},
		{name: "allow rule on the real target", tool: "Read", allow: []string{"Read(//etc/**)"}, in: fp("src/link/hosts"), want: permission.Allow},
		{name: "deny rule on the real target", tool: "Read", allow: []string{"Read"}, deny: []string{"Read(//etc/**)"}, in: fp("src/link/hosts"), want: permission.Deny},
		{name: "deny rule as written", tool: "Read", deny: []string{"Read(./src/link/**)"}, in: fp("/etc/hosts"), want: permission.Deny},
		{name: "deny rule through a link to the denied file", tool: "Read", deny: []string{"Read(./.env)"}, in: fp("env-copy"), want: permission.Deny},
		{name: "link into an extra dir is inside", tool: "Read", in: fp("notes/a.md"), dirs: []string{"/data"}, want: permission.Allow},
		{name: "extra dir given through a link", tool: "Read", in: fp("/data/notes/a.md"), dirs: []string{cwd + "/notes"}, want: permission.Allow},
		{name: "outside path leading inside is inside", tool: "Read", in: fp("/data/in-project/a.go"), want: permission.Allow},
		{name: "home rule through a link", tool: "Read", allow: []string{"Read(~/dotfiles/**)"}, in: fp("dot/x"), want: permission.Allow},
		{name: "plain inside read", tool: "Read", in: fp("src/a.go"), want: permission.Allow},
		{name: "plain inside edit in acceptEdits", tool: "Edit", in: fp("src/a.go"), mode: permission.ModeAcceptEdits, want: permission.Allow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := permission.Policy{Allow: rules(t, tt.allow...), Deny: rules(t, tt.deny...), Home: home, Realpath: fakeLinks(links)}
			req := toolReq(tt.tool, tt.in, tt.mode)
			req.Dirs = tt.dirs
			if d := p.Check(req); d.Behavior != tt.want {
				t.Fatalf("Check(%s %v) = %s (%s); want %s", tt.tool, tt.in, d.Behavior, d.Reason, tt.want)
			}
		})
	}
}

func TestRealPathsBash(t *testing.T) {
	tests := []struct {
		name  string
		allow []string
		deny  []string
		cmd   string
		mode  permission.Mode
		want  permission.Behavior
	}{
		{name: "cat through a link leading outside", cmd: "cat src/link/passwd", want: permission.Ask},
		{name: "redirect through a link leading outside", cmd: "echo x > src/link/x", mode: permission.ModeAcceptEdits, want: permission.Ask},
		{name: "redirect through a link to git config", allow: []string{"Bash", "Edit"}, cmd: "echo x > src/cfg", want: permission.Ask},
		{name: "tee through a link to git config", allow: []string{"Bash(tee:*)"}, cmd: "tee src/cfg < x", want: permission.Ask},
		{name: "deny rule through a link", deny: []string{"Read(./.env)"}, cmd: "cat env-copy", want: permission.Deny},
		{name: "plain cat", cmd: "cat src/a.go", want: permission.Allow},
		{name: "git status", cmd: "git status", want: permission.Allow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := permission.Policy{Allow: rules(t, tt.allow...), Deny: rules(t, tt.deny...), Home: home, Shell: shell.Parse, Realpath: fakeLinks(links)}
			if d := p.Check(bash(tt.cmd, tt.mode)); d.Behavior != tt.want {
				t.Fatalf("Check(%q) = %s (%s); want %s", tt.cmd, d.Behavior, d.Reason, tt.want)
			}
		})
	}
}

func TestProtectedTools(t *testing.T) {
	paths := []string{".git/config", ".git/hooks/pre-commit", ".git", "sub/.git/info/exclude", ".troupe/settings.json",
		".claude/settings.local.json", ".mcp.json", ".gitmodules", ".gitattributes", ".bashrc", "~/.zshrc", "~/.profile",
		"~/.bash_login", "~/.zprofile", "~/.zshenv", "~/.bash_profile", "~/.config/fish/config.fish", "~/.gitconfig",
		"~/.troupe/settings.json", "~/.claude/settings.json", "/opt/troupe-home/settings.local.json"}
	for _, f := range paths {
		for _, tool := range []string{"Write", "Edit"} {
			p := permission.Policy{Allow: rules(t, "Edit", "Write(**)"), Home: home, Protected: []string{"/opt/troupe-home"}}
			for _, mode := range []permission.Mode{permission.ModeDefault, permission.ModeAcceptEdits} {
				if d := p.Check(toolReq(tool, map[string]string{"file_path": f}, mode)); d.Behavior != permission.Ask {
					t.Errorf("Check(%s %s, %s) = %s (%s); want ask", tool, f, mode, d.Behavior, d.Reason)
				}
			}
			if d := p.Check(toolReq(tool, map[string]string{"file_path": f}, permission.ModeBypass)); d.Behavior != permission.Allow {
				t.Errorf("Check(%s %s, bypass) = %s; want allow", tool, f, d.Behavior)
			}
			if d := p.Check(toolReq(tool, map[string]string{"file_path": f}, permission.ModeDontAsk)); d.Behavior != permission.Deny {
				t.Errorf("Check(%s %s, dontAsk) = %s; want deny", tool, f, d.Behavior)
			}
		}
		if d := (permission.Policy{Home: home}).Check(toolReq("Read", map[string]string{"file_path": f}, "")); strings.HasPrefix(f, ".") && d.Behavior != permission.Allow {
			t.Errorf("Check(Read %s) = %s; want allow (reading is not protected)", f, d.Behavior)
		}
	}
	for _, f := range []string{"src/git/config", ".github/workflows/ci.yml", "docs/claude.md", "gitconfig.go", "x.bashrc.bak"} {
		p := permission.Policy{Home: home}
		if d := p.Check(toolReq("Write", map[string]string{"file_path": f}, permission.ModeAcceptEdits)); d.Behavior != permission.Allow {
			t.Errorf("Check(Write %s, acceptEdits) = %s (%s); want allow", f, d.Behavior, d.Reason)
		}
	}
}

func TestDeniesRead(t *testing.T) {
	p := permission.Policy{Deny: rules(t, "Read(./.env)", "Read(*.pem)", "Edit(./src/**)", "Bash(cat:*)"), Home: home, Realpath: fakeLinks(links)}
	tests := []struct {
		path string
		want bool
	}{
		{cwd + "/.env", true},
		{cwd + "/env-copy", true}, // a link to .env
		{cwd + "/a/b/key.pem", true},
		{".env", true}, // relative to cwd
		{cwd + "/sub/.env", false},
		{cwd + "/src/a.go", false}, // an Edit rule does not withhold reads
		{cwd + "/.env.example", false},
	}
	for _, tt := range tests {
		if got := p.DeniesRead(tt.path, cwd); got != tt.want {
			t.Errorf("DeniesRead(%q) = %v; want %v", tt.path, got, tt.want)
		}
	}
	if (permission.Policy{}).DeniesRead(cwd+"/.env", cwd) {
		t.Error("DeniesRead without rules = true; want false")
	}
}
