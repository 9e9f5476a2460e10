package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/tool/prtool/prtooltest"
)

// A headless lead subscribes to a pull request on a local fake of
// GitHub's REST API (GITHUB_API_URL, GITHUB_TOKEN from the run's
// environment), is woken by the monitor's first line, and unsubscribes;
// the run ends with no monitor left.
func TestHeadlessLeadPRActivity(t *testing.T) {
	dir := t.TempDir()
	home, cwd := homeAndWork(t, dir)
	f := prtooltest.New(t)
	script := filepath.Join(dir, "script.json")
	writeFile(t, script, `{"turns":[
 {"match":{"turn":0},"reply":{"tool_calls":[
   {"name":"subscribe_pr_activity","input":{"url":"https://github.com/octo/repo/pull/7","filter":"."}}]}},
 {"match":{"tool_result":"subscribe_pr_activity"},"reply":{"text":"watching"}},
 {"match":{"user":"new activity follows"},"reply":{"tool_calls":[
   {"name":"unsubscribe_pr_activity","input":{"owner":"octo","repo":"repo","pull_number":7}}]}},
 {"match":{"tool_result":"unsubscribe_pr_activity","user":"no more polling"},"reply":{"text":"PR-DONE"}},
 {"reply":{"text":"other"},"repeat":true}
]}`)
	env := map[string]string{"GITHUB_API_URL": f.URL, "GITHUB_TOKEN": "tok-e2e"}
	var out, errOut bytes.Buffer
	m := &Main{Stdout: &out, Stderr: &errOut, Getenv: func(k string) string { return env[k] }, NewID: func() string { return "session-1" }}
	err := m.Run(t.Context(), []string{"--home", home, "-p", "--cwd", cwd, "--permission-mode", "bypassPermissions", "--provider", "scripted",
		"--script", script, "--output-format", "stream-json", "watch the PR"})
	if err != nil {
		t.Fatalf("run: %v\n%s\n%s", err, out.String(), errOut.String())
	}
	got := userTexts(t, out.String())
	if !strings.Contains(got, `octo/repo#7 &#34;Add the widget&#34; is open`) && !strings.Contains(got, `octo/repo#7 "Add the widget" is open`) {
		t.Errorf("the lead was not woken with the pull request's summary; its input:\n%s", got)
	}
	if !strings.Contains(out.String(), `"result":"PR-DONE"`) {
		t.Errorf("the run did not end after unsubscribe:\n%s", out.String())
	}
	for _, r := range f.Requests() {
		if r.Auth != "Bearer tok-e2e" {
			t.Errorf("%s: Authorization %q; want the token from GITHUB_TOKEN", r.Path, r.Auth)
		}
	}
}
