package kit

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/tool"
	"github.com/troupe-dev/troupe/tool/prtool"
	"github.com/troupe-dev/troupe/tool/prtool/prtooltest"
)

// subscribe_pr_activity starts a monitor task over a pull request whose
// new events wake the agent (once each, filtered), and
// unsubscribe_pr_activity stops it: no request reaches GitHub after.
func TestPRActivityTools(t *testing.T) {
	reg := task.New(task.Config{Dir: t.TempDir(), PollInterval: -1})
	t.Cleanup(func() { reg.Close(context.Background()) })
	f := prtooltest.New(t)
	f.AddComment("dora", "an old comment")
	tools := PRTools(reg, "", prtool.Config{BaseURL: f.URL, Interval: 30 * time.Millisecond,
		Token: func(context.Context) (string, string) { return "tok-1", "the test" }})
	sub, unsub := tools[0], tools[1]
	events := reg.Subscribe()
	defer events.Close()
	run := func(tl tool.Tool, input string) tool.Result {
		t.Helper()
		res, err := tl.Run(t.Context(), tool.Call{ID: "toolu_1", Input: json.RawMessage(input)})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}

	if res := run(sub, `{"owner":"octo","repo":"repo","pull_number":99}`); !res.IsError || !strings.Contains(res.Content, "not found") {
		t.Errorf("subscribe to a missing PR = %+v; want an error saying not found", res)
	}
	res := run(sub, `{"url":"https://github.com/octo/repo/pull/7","filter":"^review"}`)
	if res.IsError {
		t.Fatal(res.Content)
	}
	m := regexp.MustCompile(`^Monitor (m\w+) is watching octo/repo#7, polling every 30ms, authenticated with the token from the test\. Now: octo/repo#7 "Add the widget" is open, head aaaaaaa: 1 comments`).FindStringSubmatch(res.Content)
	if m == nil {
		t.Fatalf("subscribe = %q", res.Content)
	}
	id := task.ID(m[1])
	f.AddComment("carol", "ship it")
	f.AddReview("alice", "APPROVED", "looks good")

	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	for {
		e, err := events.Next(ctx)
		if err != nil {
			t.Fatalf("no wake with the review: %v", err)
		}
		if e.Kind != task.EventMonitor || e.State.ID != id {
			continue
		}
		if strings.Contains(e.Notification, "comment by") {
			t.Errorf("the filter let a comment through: %s", e.Notification)
		}
		if strings.Contains(e.Notification, "review by alice: APPROVED") {
			break
		}
	}
	if res := run(unsub, `{"task_id":"bnope"}`); !res.IsError || !strings.Contains(res.Content, "running: "+string(id)+" octo/repo#7") {
		t.Errorf("unsubscribe of an unknown id = %+v; want an error listing the running one", res)
	}
	if res := run(unsub, `{"url":"octo/repo#7"}`); res.IsError || !strings.Contains(res.Content, "Stopped "+string(id)+" (octo/repo#7)") {
		t.Fatalf("unsubscribe = %+v", res)
	}
	st, _ := reg.Get(id)
	if !st.Status.Terminal() {
		t.Errorf("monitor %s is %s after unsubscribe; want ended", id, st.Status)
	}
	out, err := os.ReadFile(st.OutputFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`comment by carol: "ship it"`, `review by alice: APPROVED "looks good"`} {
		if n := strings.Count(string(out), want); n != 1 {
			t.Errorf("output has %q %d times; want once:\n%s", want, n, out)
		}
	}
	// Unsubscribe returns once polling has stopped; a request already on
	// the wire when it did may still reach the fake, so let that land.
	time.Sleep(100 * time.Millisecond)
	before := len(f.Requests())
	time.Sleep(10 * 30 * time.Millisecond) // ten intervals
	if after := len(f.Requests()); after != before {
		t.Errorf("%d requests after unsubscribe; want none", after-before)
	}
	if res := run(unsub, `{"owner":"octo","repo":"repo","pull_number":7}`); !res.IsError || !strings.Contains(res.Content, "no running monitor watches octo/repo#7 (none is running)") {
		t.Errorf("second unsubscribe = %+v", res)
	}
}

// The prActivity setting sets the default interval (a value under the
// minimum is warned about and ignored); GITHUB_TOKEN and GITHUB_API_URL
// come through the run's environment.
func TestPRConfigFromSettingsAndEnv(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(cwd, ".troupe"), 0o755)
	set := func(v string) {
		if err := os.WriteFile(filepath.Join(cwd, ".troupe", "settings.json"), []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var warned []string
	warn := func(s string) { warned = append(warned, s) }
	set(`{"prActivity": {"intervalSeconds": 120}}`)
	if d := prInterval(home, cwd, warn); d != 2*time.Minute || len(warned) != 0 {
		t.Errorf("prInterval = %v, warnings %q; want 2m0s", d, warned)
	}
	set(`{"prActivity": {"intervalSeconds": 5}}`)
	if d := prInterval(home, cwd, warn); d != 0 || len(warned) != 1 || !strings.Contains(warned[0], "prActivity.intervalSeconds 5: want at least 10") {
		t.Errorf("prInterval = %v, warnings %q; want 0 and a warning", d, warned)
	}
	env := map[string]string{"GITHUB_TOKEN": " tok-env\n", "GITHUB_API_URL": "https://ghe.example.com/api/v3/"}
	cfg := prConfig(ToolOptions{Context: &Context{getenv: func(k string) string { return env[k] }, prInterval: time.Minute}})
	if tok, from := cfg.Token(t.Context()); tok != "tok-env" || from != "GITHUB_TOKEN" {
		t.Errorf("token = %q from %q; want tok-env from GITHUB_TOKEN", tok, from)
	}
	if cfg.BaseURL != env["GITHUB_API_URL"] || cfg.Interval != time.Minute {
		t.Errorf("config = %+v; want GITHUB_API_URL and the setting's interval", cfg)
	}
}

// Without a token the subscription polls unauthenticated every 5
// minutes and its monitor's first line says so; TaskStop's way, by id,
// stops it as unsubscribe_pr_activity does.
func TestPRActivityUnauthenticated(t *testing.T) {
	reg := task.New(task.Config{Dir: t.TempDir(), PollInterval: -1})
	t.Cleanup(func() { reg.Close(context.Background()) })
	f := prtooltest.New(t)
	tools := PRTools(reg, "", prtool.Config{BaseURL: f.URL, Token: func(context.Context) (string, string) { return "", "" }})
	res, err := tools[0].Run(t.Context(), tool.Call{ID: "toolu_2", Input: json.RawMessage(`{"owner":"octo","repo":"repo","pull_number":7}`)})
	if err != nil || res.IsError || !strings.Contains(res.Content, "polling every 5m0s, unauthenticated") {
		t.Fatalf("subscribe = %+v, %v; want unauthenticated polling every 5 minutes", res, err)
	}
	if r := f.Requests()[0]; r.Auth != "" {
		t.Errorf("an unauthenticated poll sent Authorization %q", r.Auth)
	}
	id := strings.Fields(res.Content)[1]
	st, _ := reg.Get(task.ID(id))
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(st.OutputFile)
		if strings.HasPrefix(string(b), "note: polling unauthenticated") && strings.Contains(string(b), "is open, head aaaaaaa") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("monitor output %q; want the note, then the baseline", b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	res, _ = tools[1].Run(t.Context(), tool.Call{Input: json.RawMessage(`{"task_id":"` + id + `"}`)})
	if res.IsError {
		t.Fatal(res.Content)
	}
	if st, _ := reg.Get(task.ID(id)); !st.Status.Terminal() {
		t.Errorf("monitor is %s after unsubscribe by id", st.Status)
	}
}
