package prtool

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/tool/prtool/prtooltest"
)

func newPoller(t *testing.T, f *prtooltest.Fake, interval time.Duration) *Poller {
	t.Helper()
	p, err := NewPoller(PollConfig{PR: PR{Owner: f.Owner, Repo: f.Repo, Number: f.Number}, Interval: interval, Token: "tok-1", BaseURL: f.URL})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The first poll remembers what is there; each later event is told once,
// in the house's one-line form; an unchanged pull request is asked for
// with the ETags of the last answers and answered 304, yielding nothing.
func TestPollerTellsNewEventsOnce(t *testing.T) {
	f := prtooltest.New(t)
	f.AddComment("dora", "an old comment")
	f.SetCheck("build", "in_progress", "")
	p := newPoller(t, f, time.Second)
	ctx := t.Context()

	lines, done, err := p.Poll(ctx)
	if err != nil || done || len(lines) != 0 {
		t.Fatalf("baseline poll = %q, %v, %v; want no line", lines, done, err)
	}
	if b := p.Baseline(); !strings.Contains(b, `octo/repo#7 "Add the widget" is open, head aaaaaaa: 1 comments, 0 review comments, 0 reviews, 1 check run states`) {
		t.Errorf("baseline = %q", b)
	}
	f.AddReview("alice", "APPROVED", "looks good")
	f.AddReview("bob", "PENDING", "a draft")
	f.AddReviewComment("bob", "widget.go", 12, "nit: name\nmore words")
	f.AddComment("carol", "ship it")
	f.SetCheck("build", "completed", "success")
	lines, _, err = p.Poll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`comment by carol: "ship it"`,
		`review comment by bob on widget.go:12: "nit: name …"`,
		`review by alice: APPROVED "looks good"`,
		`check build: completed success (aaaaaaa)`,
	}
	if !slices.Equal(lines, want) {
		t.Errorf("second poll = %q\nwant %q", lines, want)
	}

	before := len(f.Requests())
	lines, _, err = p.Poll(ctx)
	if err != nil || len(lines) != 0 {
		t.Fatalf("unchanged poll = %q, %v; want nothing", lines, err)
	}
	reqs := f.Requests()[before:]
	if len(reqs) != 5 {
		t.Fatalf("unchanged poll made %d requests; want 5 (the PR, 3 lists, the check runs)", len(reqs))
	}
	for _, r := range reqs {
		if r.Status != http.StatusNotModified || r.IfNoneMatch == "" {
			t.Errorf("%s: status %d with If-None-Match %q; want a conditional request answered 304", r.Path, r.Status, r.IfNoneMatch)
		}
		if r.Auth != "Bearer tok-1" {
			t.Errorf("%s: Authorization %q; want the token", r.Path, r.Auth)
		}
	}
	if p.NotModified() != 5 {
		t.Errorf("NotModified = %d; want 5", p.NotModified())
	}

	// A push moves the check runs to the new head; a merge ends it.
	f.Push("bbbbbbb2222222222222222222222222222222222")
	f.SetCheck("build", "queued", "")
	f.Merge("carol")
	lines, done, err = p.Poll(ctx)
	want = []string{"new head commit bbbbbbb on widget", "pull request merged by carol", "check build: queued (bbbbbbb)"}
	if err != nil || !done || !slices.Equal(lines, want) {
		t.Errorf("after push and merge = %q, done %v, %v\nwant %q, done", lines, done, err, want)
	}
}

// A rate-limit answer is told and waited out until the reset GitHub
// gives, with no request before it; then polling goes on and the events
// of the meantime arrive.
func TestPollerWaitsOutRateLimit(t *testing.T) {
	f := prtooltest.New(t)
	p := newPoller(t, f, 20*time.Millisecond)
	lines := make(chan string, 100)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ended := make(chan error, 1)
	go func() {
		_, err := p.Run(ctx, func(l string) bool { lines <- l; return true })
		ended <- err
	}()
	next := func(want string) string {
		t.Helper()
		select {
		case l := <-lines:
			if !strings.Contains(l, want) {
				t.Fatalf("line %q; want one with %q", l, want)
			}
			return l
		case <-time.After(10 * time.Second):
			t.Fatalf("no line with %q", want)
		}
		return ""
	}
	next("is open, head aaaaaaa")
	reset := time.Now().Add(1500 * time.Millisecond).Truncate(time.Second).Add(time.Second)
	f.RateLimit(1, reset)
	next("rate limited by GitHub (60 requests an hour): waiting until " + reset.UTC().Format("15:04:05 UTC"))
	f.AddReview("alice", "CHANGES_REQUESTED", "")
	next("rate limit over: polling again")
	next("review by alice: CHANGES_REQUESTED")
	var limitedAt time.Time
	for _, r := range f.Requests() {
		if r.Status == http.StatusForbidden {
			limitedAt = r.At
			continue
		}
		if !limitedAt.IsZero() && r.At.Before(reset) {
			t.Errorf("request %s at %v, before the reset %v", r.Path, r.At, reset)
		}
	}
	if limitedAt.IsZero() {
		t.Error("the fake never answered with a rate limit")
	}
	cancel()
	if err := <-ended; err != nil {
		t.Errorf("Run after cancel: %v", err)
	}
}

// Run ends when the pull request is merged, saying so.
func TestPollerEndsOnMerge(t *testing.T) {
	f := prtooltest.New(t)
	p := newPoller(t, f, 10*time.Millisecond)
	var got []string
	f.Merge("dora") // before the first poll: told as the baseline's state
	note, err := p.Run(t.Context(), func(l string) bool { got = append(got, l); return true })
	if err != nil || note != "octo/repo#7 was merged: the monitor ended" {
		t.Errorf("Run = %q, %v", note, err)
	}
	if len(got) != 2 || got[1] != "pull request merged by dora" {
		t.Errorf("lines = %q; want the baseline and the merge", got)
	}
}

// A pull request GitHub does not show fails with ErrNotFound.
func TestPollerNotFound(t *testing.T) {
	f := prtooltest.New(t)
	p, err := NewPoller(PollConfig{PR: PR{Owner: "octo", Repo: "repo", Number: 99}, BaseURL: f.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.Poll(t.Context()); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "octo/repo#99") {
		t.Errorf("Poll = %v; want ErrNotFound naming octo/repo#99", err)
	}
}

// runLines runs p in the background and returns a function that waits
// for the next line and checks it holds want.
func runLines(t *testing.T, p *Poller) func(want string) string {
	t.Helper()
	lines := make(chan string, 100)
	ctx, cancel := context.WithCancel(t.Context())
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		p.Run(ctx, func(l string) bool { lines <- l; return true })
	}()
	t.Cleanup(func() { cancel(); <-ended })
	return func(want string) string {
		t.Helper()
		select {
		case l := <-lines:
			if !strings.Contains(l, want) {
				t.Fatalf("line %q; want one with %q", l, want)
			}
			return l
		case <-time.After(10 * time.Second):
			t.Fatalf("no line with %q", want)
		}
		return ""
	}
}

// A poll cut short by a rate limit returns what it read before (those
// lists' ETags are kept, so it would never come again), and the next
// poll after the reset the rest, each once.
func TestPollerKeepsWhatAFailedPollRead(t *testing.T) {
	f := prtooltest.New(t)
	p := newPoller(t, f, time.Second)
	ctx := t.Context()
	if _, _, err := p.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	f.AddComment("carol", "first")
	f.AddReview("alice", "COMMENTED", "second")
	f.RateLimitAfter(2, 1, time.Now().Add(time.Second)) // the PR and the issue comments answer; the review comments do not
	lines, _, err := p.Poll(ctx)
	var rl *RateLimitedError
	if !errors.As(err, &rl) || !slices.Equal(lines, []string{`comment by carol: "first"`}) {
		t.Fatalf("cut poll = %q, %v; want the comment and a rate limit", lines, err)
	}
	time.Sleep(time.Until(rl.Until) + 10*time.Millisecond)
	lines, _, err = p.Poll(ctx)
	if err != nil || !slices.Equal(lines, []string{`review by alice: COMMENTED "second"`}) {
		t.Errorf("poll after the reset = %q, %v; want the review alone", lines, err)
	}
}

// A secondary rate limit (429 with Retry-After) is waited out the same
// way.
func TestPollerRetryAfter(t *testing.T) {
	f := prtooltest.New(t)
	p := newPoller(t, f, 20*time.Millisecond)
	next := runLines(t, p)
	next("is open")
	f.RetryAfter(1, 1)
	l := next("rate limited by GitHub: waiting until ")
	f.AddReview("bob", "APPROVED", "")
	next("rate limit over")
	next("review by bob: APPROVED")
	var at, after time.Time
	for _, r := range f.Requests() {
		if r.Status == http.StatusTooManyRequests {
			at = r.At
		} else if !at.IsZero() && after.IsZero() {
			after = r.At
		}
	}
	if at.IsZero() || after.Sub(at) < 900*time.Millisecond {
		t.Errorf("429 at %v, next request at %v; want a wait of Retry-After's second (%s)", at, after, l)
	}
}
