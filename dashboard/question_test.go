package dashboard_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/ask"
	"github.com/troupe-dev/troupe/dashboard"
	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/llm/scripted"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/approve"
	"github.com/troupe-dev/troupe/swarm"
	"github.com/troupe-dev/troupe/tool"
	"github.com/troupe-dev/troupe/tool/asktool"
)

// A real teammate's AskUserQuestion waits in the lead's inbox; the page
// shows it as a form, refuses answers to questions not asked and a
// permission verdict for it, and its answer reaches the teammate's model
// as the tool result.
// askingTeammate runs alice, a real teammate whose model asks two
// questions (one with a preview, one multiSelect) by mail as a pane
// teammate does, and returns it.
func askingTeammate(t *testing.T, f *fixture) *swarm.Teammate {
	t.Helper()
	input := json.RawMessage(`{"questions":[{"question":"Which database?","header":"Database","multiSelect":false,"options":[
		{"label":"Postgres","description":"a server"},{"label":"SQLite","description":"a file","preview":"sql.Open(\"sqlite\", \"app.db\")"}]},
		{"question":"Which checks?","header":"Checks","multiSelect":true,"options":[{"label":"Tests","description":"t"},{"label":"Lint","description":"l"}]}]}`)
	script, err := json.Marshal(scripted.Script{Turns: []scripted.Turn{
		{Match: scripted.Match{User: "pick a database"}, Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "toolu_q", Name: "AskUserQuestion", Input: input}}}},
		{Match: scripted.Match{ToolResult: "AskUserQuestion"}, Reply: scripted.Reply{Text: "done"}},
		{Reply: scripted.Reply{Text: "ok"}, Repeat: true},
	}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := scripted.Parse(script)
	if err != nil {
		t.Fatal(err)
	}
	tm, err := swarm.NewTeammate(swarm.TeammateConfig{Team: "alpha", Name: "alice", Color: "blue",
		Teams: f.other.Teams(), Mail: f.other.Mail(), Tasks: f.other.Tasks(), Prompt: "pick a database",
		NoAutoClaim: true, AskTimeout: 30 * time.Second,
		Build: func(tm *swarm.Teammate) (agent.Config, error) {
			reg, err := tool.NewRegistry(asktool.New("alice", swarm.PersonAsker{Asker: approve.AskerFunc(tm.Ask)}))
			if err != nil {
				return agent.Config{}, err
			}
			pol := permission.Policy{Allow: []permission.Rule{{Tool: "AskUserQuestion"}}}
			appr := &approve.Approver{Cwd: f.root, Policy: pol, Mode: permission.ModeDefault, Asker: approve.AskerFunc(tm.Ask)}
			return agent.Config{Model: scripted.New(s), System: "You are alice.", Tools: reg, Approver: appr}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = tm.Run(runCtx) })
	t.Cleanup(func() { stop(); wg.Wait() })

	return tm
}

func TestQuestionAnswers(t *testing.T) {
	f := newFixture(t, dashboard.Config{Control: true})
	tm := askingTeammate(t, f)
	var id string
	deadline := time.Now().Add(10 * time.Second)
	for id == "" {
		inbox, _ := f.other.Mail().Read(t.Context(), "alpha", "team-lead", false)
		for _, m := range inbox {
			if fr, err := mailbox.Decode(m.Text); err == nil {
				if p, ok := fr.(mailbox.PermissionRequest); ok && p.ToolName == "AskUserQuestion" {
					id = p.RequestID
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the question did not reach the lead's inbox within 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	res, err := http.Get(f.srv.URL + "/team/alpha")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, want := range []string{`data-question="Which database?"`, `type="radio" name="` + id + `-q1" value="SQLite"`, `type="checkbox" name="` + id + `-q2" value="Lint"`,
		`<pre class="preview">sql.Open(&#34;sqlite&#34;, &#34;app.db&#34;)</pre>`, `data-act="answer"`, `data-act="decline"`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the page does not hold %s", want)
		}
	}
	url := f.srv.URL + "/team/alpha/answer"
	if code, body := postJSON(t, f.srv.URL+"/team/alpha/permission", `{"request_id":"`+id+`","decision":"allow"}`); code != http.StatusBadRequest || !strings.Contains(body, "is a question") {
		t.Errorf("a permission verdict for the question: %d %s; want 400", code, body)
	}
	if code, body := postJSON(t, url, `{"request_id":"`+id+`","answers":{"Which?":"x"}}`); code != http.StatusBadRequest || !strings.Contains(body, "not one of the questions") {
		t.Errorf("an answer to another question: %d %s; want 400", code, body)
	}
	if code, body := postJSON(t, url, `{"request_id":"`+id+`","answers":{"Which database?":"SQLite","Which checks?":"Tests, Lint"}}`); code != http.StatusOK {
		t.Fatalf("answer: %d %s", code, body)
	}
	if code, _ := postJSON(t, url, `{"request_id":"`+id+`","decline":true}`); code != http.StatusConflict {
		t.Errorf("a second answer: %d; want 409 (answered already)", code)
	}
	want := `User has answered your questions: "Which database?"="SQLite", "Which checks?"="Tests, Lint".`
	deadline = time.Now().Add(10 * time.Second)
	for !holds(tm.Agent().Messages(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("the teammate's model never got %q: %+v", want, tm.Agent().Messages())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// holds reports whether a tool result in ms contains s.
func holds(ms []llm.Message, s string) bool {
	for _, m := range ms {
		for _, b := range m.Content {
			if b.Type == llm.BlockToolResult && strings.Contains(b.Text, s) {
				return true
			}
		}
	}
	return false
}

func TestPageKeys(t *testing.T) {
	qs := []ask.Question{{Question: "Run \x1b[8m?"}, {Question: "Plain?"}}
	got := dashboard.PageKeys(ask.Answers{`Run \x1b[8m?`: "yes", "Plain?": "no"}, qs)
	if got["Run \x1b[8m?"] != "yes" || got["Plain?"] != "no" || len(got) != 2 {
		t.Fatalf("PageKeys = %q", got)
	}
}
