package dashboard_test

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/troupe-dev/troupe/dashboard"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/team"
)

// TestBrowserTeamPage drives the read-only dashboard in headless Chromium:
// the teams page links to the team page, which shows the members and the
// task board; a message and a task change written by another process
// appear within one second without a reload; a hostile message is inert.
func TestBrowserTeamPage(t *testing.T) {
	ctx := browser(t)
	f := newFixture(t, dashboard.Config{Spending: func(string) (map[string]dashboard.Spend, bool) {
		return map[string]dashboard.Spend{"lead": {Tokens: 48210, USD: 0.1834, Priced: true}, "alice": {Tokens: 23950, USD: 0.0912, Priced: true}}, true
	}})
	if _, err := f.other.Teams().Update(t.Context(), "alpha", func(c *team.Config) error { c.LeadSessionID = "s-1"; return nil }); err != nil {
		t.Fatal(err)
	}
	design, err := f.tasks.Create(t.Context(), tasklist.Draft{Subject: "design the widget", Owner: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	build, err := f.tasks.Create(t.Context(), tasklist.Draft{Subject: "build the widget", BlockedBy: []string{design.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.tasks.Update(t.Context(), design.ID, tasklist.Update{Status: ptr(tasklist.StatusInProgress)}); err != nil {
		t.Fatal(err)
	}
	f.send(t, "alice", "team-lead", `{"type":"permission_request","request_id":"perm-1","agent_id":"alice","tool_name":"Bash","tool_use_id":"tu-1","input":{"command":"go test ./..."},"permission_suggestions":[]}`)
	shots := t.TempDir()

	run(t, ctx, "open the teams page", 10*time.Second,
		chromedp.Navigate(f.srv.URL+"/"),
		chromedp.WaitVisible(`#teams a[href="/team/alpha"]`),
	)
	screenshot(t, ctx, shots, "teams")
	run(t, ctx, "open the team page", 10*time.Second,
		chromedp.Click(`#teams a[href="/team/alpha"]`),
		chromedp.WaitVisible(`#members tr[data-name="alice"]`),
	)
	until(t, ctx, "the event stream connects", `document.getElementById('conn').textContent === 'live'`, 5*time.Second)
	got := get(t, ctx, "read alice's row", 5*time.Second, chromedp.Text(`#members tr[data-name="alice"]`))
	for _, want := range []string{"alice", "working", "claude-sonnet-4-5", "#" + design.ID, "design the widget", "23,950 tokens · $0.0912"} {
		if !contains(got, want) {
			t.Errorf("alice's row = %q; want it to show %q", got, want)
		}
	}
	until(t, ctx, "the blocker is a link", `document.querySelector('[data-column="Pending"] [data-task="`+build.ID+`"] .blockers a[href="#task-`+design.ID+`"]') !== null`, time.Second)
	until(t, ctx, "the permission request is in words", `document.getElementById('timeline').textContent.includes('alice asks to run go test ./...')`, time.Second)

	// Live: a message sent by another process appears without a reload.
	run(t, ctx, "mark the page", time.Second, chromedp.Evaluate[chromedp.Void](`window.notReloaded = true`))
	f.send(t, "alice", "bob", "hello from alice")
	took := until(t, ctx, "the message appears", `document.getElementById('timeline').textContent.includes('hello from alice')`, time.Second)
	t.Logf("message visible %v after the send", took)

	// A task completed elsewhere moves to the Completed column, and its
	// dependant loses the blocker.
	if _, err := f.tasks.Update(t.Context(), design.ID, tasklist.Update{Status: ptr(tasklist.StatusCompleted)}); err != nil {
		t.Fatal(err)
	}
	took = until(t, ctx, "the task moves columns", `document.querySelector('[data-column="Completed"] [data-task="`+design.ID+`"]') !== null && document.querySelector('[data-task="`+build.ID+`"] .blockers') === null`, time.Second)
	t.Logf("task moved %v after the update", took)
	screenshot(t, ctx, shots, "team")

	// Hostile text is shown, not run.
	hostile := "<script>window.pwned=1</script><img src=x onerror=\"window.pwned=2\">\x1b[31mred\x1b]0;title\x07 done"
	f.send(t, "bob", "alice", hostile)
	until(t, ctx, "the hostile message appears", `document.getElementById('timeline').textContent.includes('done')`, time.Second)
	pwned := get(t, ctx, "read window.pwned", 5*time.Second, chromedp.Evaluate[bool](`window.pwned !== undefined`))
	nodes := get(t, ctx, "count elements", 5*time.Second, chromedp.Evaluate[int](`document.querySelectorAll('#live script, #live img').length`))
	notReloaded := get(t, ctx, "read the mark", 5*time.Second, chromedp.Evaluate[bool](`window.notReloaded === true`))
	got = get(t, ctx, "read the hostile message", 5*time.Second, chromedp.Text(`#timeline li.msg[data-from="bob"] .words`))
	if pwned || nodes != 0 {
		t.Errorf("hostile message ran or made elements: pwned=%v, script/img elements=%d", pwned, nodes)
	}
	if want := `<script>window.pwned=1</script><img src=x onerror="window.pwned=2">\x1b[31mred\x1b]0;title\x07 done`; got != want {
		t.Errorf("hostile message shown as %q; want %q (markup as text, escapes visible)", got, want)
	}
	if !notReloaded {
		t.Error("the page reloaded; updates should come over the event stream")
	}

	// A second tab catches up from the current state.
	tab, cancel := chromedp.NewContext(ctx)
	defer cancel()
	if err := chromedp.Do(tab); err != nil { // the first run opens the tab: no deadline on it
		t.Fatal(err)
	}
	run(t, tab, "open a second tab", 10*time.Second,
		chromedp.Navigate(f.srv.URL+"/team/alpha"),
		chromedp.WaitVisible(`#timeline`),
	)
	until(t, tab, "the new tab has the history", `document.getElementById('timeline').textContent.includes('hello from alice')`, time.Second)

	// The agent filter hides other agents' messages.
	run(t, ctx, "filter by bob", 5*time.Second, chromedp.SetValue(`#filter`, "bob"),
		chromedp.Evaluate[chromedp.Void](`document.getElementById('filter').dispatchEvent(new Event('change', {bubbles: true}))`))
	until(t, ctx, "alice's request to the lead is hidden", `Array.from(document.querySelectorAll('#timeline li.msg')).filter(li => !li.hidden).every(li => li.dataset.from === 'bob' || li.dataset.to === 'bob')`, time.Second)
}

func contains(s, sub string) bool { return len(sub) == 0 || indexOf(s, sub) >= 0 }

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}
