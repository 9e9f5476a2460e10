package shell_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/shell"
)

// corpusPolicy is the policy the corpora are judged by: two allow rules
// besides the built-in read-only list, in the project of corpusStat.
var corpusPolicy = permission.Policy{
	Allow: []permission.Rule{permission.MustParseRule("Bash(git status:*)"), permission.MustParseRule("Bash(npm test)")},
	Home:  "/home/u",
	Shell: shell.Parse,
	Stat:  corpusStat,
}

// corpusStat is the project the corpora run in, as if cloned: its own
// repository (.git), plain folders (sub, src), a vendored repository
// (sub/vendored/.git), and evil, a git directory shipped as plain files
// (HEAD, config, objects/, refs/), and half, one without its HEAD yet.
func corpusStat(abs string) (exists, dir bool) {
	files := map[string]bool{".git": true, "sub": true, "src": true, "sub/vendored": true, "sub/vendored/.git": true,
		"evil": true, "evil/HEAD": false, "evil/config": false, "evil/objects": true, "evil/refs": true,
		"half": true, "half/objects": true, "half/refs": true}
	if abs == corpusCwd || strings.HasPrefix(corpusCwd, abs+"/") || abs == "/" {
		return true, true
	}
	rel, ok := strings.CutPrefix(abs, corpusCwd+"/")
	if !ok {
		return false, false
	}
	dir, ok = files[rel]
	return ok, dir
}

const corpusCwd = "/work/proj"

func corpusCheck(cmd string, mode permission.Mode) permission.Decision {
	in, _ := json.Marshal(map[string]string{"command": cmd})
	return corpusPolicy.Check(permission.Request{Tool: "Bash", Input: in, Cwd: corpusCwd, Mode: mode})
}

// readCorpus returns the commands of a testdata file: one a line, blank
// lines and # comments skipped, \n standing for a newline.
func readCorpus(t testing.TB, name string) []string {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, strings.ReplaceAll(line, `\n`, "\n"))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestHostileCorpus(t *testing.T) {
	cmds := readCorpus(t, "hostile.txt")
	if len(cmds) < 300 {
		t.Fatalf("hostile.txt has %d commands; want at least 300", len(cmds))
	}
	for _, mode := range []permission.Mode{permission.ModeDefault, permission.ModeAcceptEdits} {
		for _, cmd := range cmds {
			if d := corpusCheck(cmd, mode); d.Behavior == permission.Allow {
				t.Errorf("mode %s: Check(%q) = allow (%s); want ask or deny", mode, cmd, d.Reason)
			}
		}
	}
}

func TestBenignCorpus(t *testing.T) {
	cmds := readCorpus(t, "benign.txt")
	if len(cmds) < 40 {
		t.Fatalf("benign.txt has %d commands; want at least 40", len(cmds))
	}
	for _, cmd := range cmds {
		if d := corpusCheck(cmd, permission.ModeDefault); d.Behavior != permission.Allow {
			t.Errorf("Check(%q) = %s (%s); want allow", cmd, d.Behavior, d.Reason)
		}
	}
}

// TestHostileProtected checks writes to protected paths: never allowed
// in default mode, nor in acceptEdits mode once the policy protects .git.
func TestHostileProtected(t *testing.T) {
	modes := []permission.Mode{permission.ModeDefault}
	if d := corpusCheck("echo x > .git/config", permission.ModeAcceptEdits); d.Behavior != permission.Allow {
		modes = append(modes, permission.ModeAcceptEdits)
	} else {
		t.Log("this policy does not protect .git: acceptEdits mode not asserted")
	}
	for _, mode := range modes {
		for _, cmd := range readCorpus(t, "hostile_protected.txt") {
			if d := corpusCheck(cmd, mode); d.Behavior == permission.Allow {
				t.Errorf("mode %s: Check(%q) = allow (%s); want ask or deny", mode, cmd, d.Reason)
			}
		}
	}
}

// FuzzHostile starts from the hostile and benign corpora. Check must not
// panic, and the read-only list alone (no allow rules) must never allow a
// script that runs a program off the list, writes a file through a
// redirection, sets a variable that changes what programs load, or reads
// outside the working directory through a redirection.
func FuzzHostile(f *testing.F) {
	for _, name := range []string{"hostile.txt", "benign.txt", "hostile_protected.txt"} {
		for _, cmd := range readCorpus(f, name) {
			f.Add(cmd)
		}
	}
	p := permission.Policy{Home: "/home/u", Shell: shell.Parse}
	dangerous := map[string]bool{"rm": true, "curl": true, "wget": true, "sh": true, "bash": true, "chmod": true,
		"dd": true, "mv": true, "cp": true, "tee": true, "python": true, "node": true, "eval": true, "exec": true,
		"source": true, ".": true, "xargs": true, "env": true, "sudo": true, "awk": true, "sed": true, "less": true}
	f.Fuzz(func(t *testing.T, src string) {
		if !utf8.ValidString(src) {
			return
		}
		in, _ := json.Marshal(map[string]string{"command": src})
		for _, mode := range []permission.Mode{permission.ModeDefault, permission.ModeAcceptEdits} {
			d := p.Check(permission.Request{Tool: "Bash", Input: in, Cwd: corpusCwd, Mode: mode})
			if d.Behavior != permission.Allow {
				continue
			}
			s, err := shell.Parse(src)
			if err != nil {
				t.Fatalf("mode %s: Check(%q) = allow for an unparseable command", mode, src)
			}
			for _, c := range s.Commands {
				if len(c.Args) > 0 {
					name := c.Args[0].Value
					if i := strings.LastIndexByte(name, '/'); i >= 0 {
						name = name[i+1:]
					}
					if dangerous[name] {
						t.Fatalf("mode %s: Check(%q) = allow (%s) running %s", mode, src, d.Reason, name)
					}
				}
				for _, a := range c.Assigns {
					if a.Name == "PATH" || a.Name == "PAGER" || strings.HasPrefix(a.Name, "LD_") || strings.HasPrefix(a.Name, "GIT_") {
						t.Fatalf("mode %s: Check(%q) = allow (%s) setting %s", mode, src, d.Reason, a.Name)
					}
				}
				for _, r := range c.Redirects {
					v := r.Target.Value
					abs := path.Join(corpusCwd, v)
					if strings.HasPrefix(v, "/") {
						abs = path.Clean(v)
					}
					outside := !strings.HasPrefix(abs, "/dev/") && abs != corpusCwd && !strings.HasPrefix(abs, corpusCwd+"/") ||
						strings.HasPrefix(v, "~")
					if !r.Dup && (outside || r.Write && mode == permission.ModeDefault && !strings.HasPrefix(v, "/dev/")) {
						t.Fatalf("mode %s: Check(%q) = allow (%s) redirecting to %s", mode, src, d.Reason, v)
					}
				}
			}
		}
	})
}
