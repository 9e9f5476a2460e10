package dashboard_test

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/troupe-dev/troupe/dashboard"
)

// TestBrowserAnswer answers a real teammate's questions from the page:
// a radio choice for one, a ticked box and an Other text for the
// multiSelect one; the choices survive the page's live updates, and the
// answers reach the teammate's model.
func TestBrowserAnswer(t *testing.T) {
	ctx := browser(t)
	f := newFixture(t, dashboard.Config{Control: true})
	tm := askingTeammate(t, f)
	shots := t.TempDir()

	run(t, ctx, "open the team page", 10*time.Second,
		chromedp.Navigate(f.srv.URL+"/team/alpha"),
		chromedp.WaitVisible(`#members`),
	)
	until(t, ctx, "the question is pending", `document.querySelector('#pending li.question button[data-act="answer"]') !== null`, 10*time.Second)
	until(t, ctx, "the preview shows", `document.querySelector('#pending pre.preview').textContent.includes('sql.Open')`, 5*time.Second)
	screenshot(t, ctx, shots, "question")
	run(t, ctx, "choose", 5*time.Second,
		chromedp.Click(`fieldset.q[data-question="Which database?"] input[value="SQLite"]`),
		chromedp.Click(`fieldset.q[data-question="Which checks?"] input[value="Tests"]`),
		chromedp.SendKeys(`fieldset.q[data-question="Which checks?"] input.other`, "Docs"),
	)
	// A live update (a message to bob) re-renders the page: the choices stay.
	f.send(t, "alice", "bob", "a note")
	until(t, ctx, "the page updated", `document.getElementById('timeline').textContent.includes('a note')`, 5*time.Second)
	until(t, ctx, "the choices survived", `document.querySelector('fieldset.q[data-question="Which database?"] input[value="SQLite"]').checked && document.querySelector('fieldset.q[data-question="Which checks?"] input.other').value === 'Docs'`, 5*time.Second)
	run(t, ctx, "answer", 5*time.Second, chromedp.Click(`#pending li.question button[data-act="answer"]`))
	until(t, ctx, "the answer is confirmed", `document.getElementById('control-status').textContent === "answered alice's questions"`, 5*time.Second)
	want := `User has answered your questions: "Which database?"="SQLite", "Which checks?"="Tests, Docs".`
	deadline := time.Now().Add(10 * time.Second)
	for !holds(tm.Agent().Messages(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("the teammate's model never got %q", want)
		}
		time.Sleep(10 * time.Millisecond)
	}
	until(t, ctx, "the question left the page", `document.querySelector('#pending li.question') === null`, 5*time.Second)
	screenshot(t, ctx, shots, "answered")
}
