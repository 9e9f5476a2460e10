package prtool

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/go-github/v93/github"
)

// PR names one pull request.
type PR struct {
	Owner, Repo string
	Number      int
}

// String is the short form owner/repo#number.
func (p PR) String() string { return fmt.Sprintf("%s/%s#%d", p.Owner, p.Repo, p.Number) }

// PollConfig configures a Poller.
type PollConfig struct {
	PR PR
	// Interval is the time between two polls (the tools take at least
	// MinInterval; tests go faster).
	Interval time.Duration
	// Token authenticates the requests; "" polls unauthenticated.
	Token string
	// BaseURL is the REST API's root (default https://api.github.com/);
	// tests point it at a local fake.
	BaseURL string
	// HTTP is the client under the ETag layer (default a client with a
	// 30 s timeout).
	HTTP *http.Client
}

// maxPages bounds the pages of one list read in one poll (100 items a
// page): a pull request with more activity than that shows its first
// maxPages*100 items of each kind.
const maxPages = 10

// Poller polls one pull request's activity: its issue comments, review
// comments, reviews, the check runs of its head commit and its state. Each
// list is asked for with the ETag of its last answer (If-None-Match): an
// unchanged list is answered 304, which costs no rate limit and yields
// nothing. Items already told are remembered by id (a check run by id and
// status), so each event is told once.
type Poller struct {
	cfg    PollConfig
	client *github.Client
	etags  *etagTransport

	seen    map[string]bool
	primed  bool   // the first poll (the baseline) is done
	state   string // open, closed or merged, as last seen
	head    string // the head commit as last seen
	Title   string // the pull request's title, after the first poll
	counts  map[string]int
	lastErr string
}

// NewPoller returns the Poller of cfg.PR.
func NewPoller(cfg PollConfig) (*Poller, error) {
	if cfg.PR.Owner == "" || cfg.PR.Repo == "" || cfg.PR.Number <= 0 {
		return nil, fmt.Errorf("prtool: no pull request named (owner %q, repo %q, number %d)", cfg.PR.Owner, cfg.PR.Repo, cfg.PR.Number)
	}
	base := cfg.HTTP
	if base == nil {
		base = &http.Client{Timeout: 30 * time.Second}
	}
	et := &etagTransport{next: base.Transport, tags: map[string]etagEntry{}}
	if et.next == nil {
		et.next = http.DefaultTransport
	}
	hc := *base
	hc.Transport = et
	opts := []github.ClientOptionsFunc{github.WithHTTPClient(&hc), github.WithUserAgent("troupe")}
	if cfg.Token != "" {
		opts = append(opts, github.WithAuthToken(cfg.Token))
	}
	if cfg.BaseURL != "" {
		u := cfg.BaseURL
		if !strings.HasSuffix(u, "/") {
			u += "/"
		}
		opts = append(opts, github.WithURLs(&u, &u))
	}
	c, err := github.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("prtool: GitHub client: %w", err)
	}
	return &Poller{cfg: cfg, client: c, etags: et, seen: map[string]bool{}, counts: map[string]int{}}, nil
}

// RateLimitedError is a poll refused by GitHub's rate limit: no request
// should be made before Until.
type RateLimitedError struct {
	Until time.Time
	Limit int // the hourly limit, 0 when not told (a secondary limit)
	Err   error
}

func (e *RateLimitedError) Error() string {
	return fmt.Sprintf("rate limited by GitHub until %s: %v", e.Until.UTC().Format("15:04:05 UTC"), e.Err)
}

func (e *RateLimitedError) Unwrap() error { return e.Err }

// ErrNotFound is a pull request GitHub does not show (absent, or private
// to the token).
var ErrNotFound = errors.New("prtool: pull request not found")

// Poll asks GitHub once for everything that changed and returns the new
// events as lines. The first poll is the baseline: what is there already
// is remembered, not told (Baseline sums it up). A 304 answer yields no
// line; a rate-limit answer is a *RateLimitedError, and a missing pull
// request wraps ErrNotFound. A poll that fails part way returns the
// lines it read before with the error: they count as seen. Done reports
// the pull request was merged or closed.
func (p *Poller) Poll(ctx context.Context) (lines []string, done bool, err error) {
	first := !p.primed
	emit := func(key, line string) {
		if p.seen[key] {
			return
		}
		p.seen[key] = true
		kind, _, _ := strings.Cut(key, ":")
		p.counts[kind]++
		if !first {
			lines = append(lines, line)
		}
	}
	pr, resp, err := p.client.PullRequests.Get(ctx, p.cfg.PR.Owner, p.cfg.PR.Repo, p.cfg.PR.Number)
	if err := p.check(ctx, resp, err); err != nil {
		return lines, false, err
	}
	if pr != nil { // nil on a 304: the state is as before
		p.Title = pr.GetTitle()
		state := pr.GetState()
		if pr.GetMerged() || !pr.GetMergedAt().IsZero() {
			state = "merged"
		}
		if head := pr.GetHead().GetSHA(); head != p.head {
			if p.head != "" {
				lines = append(lines, fmt.Sprintf("new head commit %s on %s", short(head), pr.GetHead().GetRef()))
			}
			p.head = head
		}
		if state != p.state {
			if p.state != "" || (first && state != "open") {
				lines = append(lines, stateLine(state, pr))
			}
			p.state = state
		}
	}
	// issue comments
	for page := 1; page > 0 && page <= maxPages; {
		cs, resp, err := p.client.Issues.ListComments(ctx, p.cfg.PR.Owner, p.cfg.PR.Repo, p.cfg.PR.Number,
			&github.IssueListCommentsOptions{ListOptions: github.ListOptions{Page: page, PerPage: 100}})
		if err := p.check(ctx, resp, err); err != nil {
			return lines, false, err
		}
		for _, c := range cs {
			emit(fmt.Sprintf("comment:%d", c.GetID()), fmt.Sprintf("comment by %s: %s", c.GetUser().GetLogin(), quote(c.GetBody())))
		}
		page = next(resp)
	}
	// review comments
	for page := 1; page > 0 && page <= maxPages; {
		cs, resp, err := p.client.PullRequests.ListComments(ctx, p.cfg.PR.Owner, p.cfg.PR.Repo, p.cfg.PR.Number,
			&github.PullRequestListCommentsOptions{ListOptions: github.ListOptions{Page: page, PerPage: 100}})
		if err := p.check(ctx, resp, err); err != nil {
			return lines, false, err
		}
		for _, c := range cs {
			where := c.GetPath()
			if l := c.GetLine(); l > 0 {
				where += ":" + strconv.Itoa(l)
			}
			emit(fmt.Sprintf("review_comment:%d", c.GetID()), fmt.Sprintf("review comment by %s on %s: %s", c.GetUser().GetLogin(), where, quote(c.GetBody())))
		}
		page = next(resp)
	}
	// reviews
	for page := 1; page > 0 && page <= maxPages; {
		rs, resp, err := p.client.PullRequests.ListReviews(ctx, p.cfg.PR.Owner, p.cfg.PR.Repo, p.cfg.PR.Number,
			&github.ListOptions{Page: page, PerPage: 100})
		if err := p.check(ctx, resp, err); err != nil {
			return lines, false, err
		}
		for _, r := range rs {
			if r.GetState() == "PENDING" { // a draft only its author sees
				continue
			}
			line := fmt.Sprintf("review by %s: %s", r.GetUser().GetLogin(), r.GetState())
			if b := strings.TrimSpace(r.GetBody()); b != "" {
				line += " " + quote(b)
			}
			emit(fmt.Sprintf("review:%d", r.GetID()), line)
		}
		page = next(resp)
	}
	// check runs of the head commit
	if p.head != "" {
		for page := 1; page > 0 && page <= maxPages; {
			res, resp, err := p.client.Checks.ListCheckRunsForRef(ctx, p.cfg.PR.Owner, p.cfg.PR.Repo, p.head,
				&github.ListCheckRunsOptions{ListOptions: github.ListOptions{Page: page, PerPage: 100}})
			if err := p.check(ctx, resp, err); err != nil {
				return lines, false, err
			}
			for _, c := range res.GetCheckRuns() {
				status := c.GetStatus()
				if c.GetConclusion() != "" {
					status += " " + c.GetConclusion()
				}
				emit(fmt.Sprintf("check:%d:%s", c.GetID(), status), fmt.Sprintf("check %s: %s (%s)", c.GetName(), status, short(c.GetHeadSHA())))
			}
			page = next(resp)
		}
	}
	p.primed = true
	return lines, p.state == "merged" || p.state == "closed", nil
}

// Baseline sums up what the first poll found.
func (p *Poller) Baseline() string {
	checks := p.counts["check"]
	return fmt.Sprintf("%s %q is %s, head %s: %d comments, %d review comments, %d reviews, %d check run states so far; new activity follows",
		p.cfg.PR, p.Title, p.state, short(p.head), p.counts["comment"], p.counts["review_comment"], p.counts["review"], checks)
}

// check turns a call's outcome into Poll's error: nil for a success and
// for a 304 (nothing changed), a *RateLimitedError, ErrNotFound, or the
// error itself.
func (p *Poller) check(ctx context.Context, resp *github.Response, err error) error {
	if err == nil {
		return nil
	}
	if resp != nil && resp.StatusCode == http.StatusNotModified {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var rl *github.RateLimitError
	if errors.As(err, &rl) {
		return &RateLimitedError{Until: rl.Rate.Reset.Time, Limit: rl.Rate.Limit, Err: err}
	}
	var ab *github.AbuseRateLimitError
	if errors.As(err, &ab) {
		return &RateLimitedError{Until: time.Now().Add(max(ab.GetRetryAfter(), time.Second)), Err: err}
	}
	if resp != nil && (resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusTooManyRequests) {
		if s := resp.Header.Get("Retry-After"); s != "" {
			if n, perr := strconv.Atoi(s); perr == nil {
				return &RateLimitedError{Until: time.Now().Add(time.Duration(max(n, 1)) * time.Second), Err: err}
			}
		}
	}
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		return fmt.Errorf("%w: %s (absent, or not visible to the token)", ErrNotFound, p.cfg.PR)
	}
	return err
}

// stateLine tells a pull request's new state.
func stateLine(state string, pr *github.PullRequest) string {
	switch state {
	case "merged":
		by := pr.GetMergedBy().GetLogin()
		if by == "" {
			return "pull request merged"
		}
		return "pull request merged by " + by
	case "closed":
		return "pull request closed without merging"
	case "open":
		return "pull request reopened"
	}
	return "pull request is now " + state
}

// next returns the next page to read, 0 when there is none (a 304 has
// none: the list is as it was).
func next(resp *github.Response) int {
	if resp == nil || resp.StatusCode == http.StatusNotModified {
		return 0
	}
	return resp.NextPage
}

// quote returns a body's first line, cut to 200 bytes, in double quotes.
func quote(body string) string {
	body = strings.TrimSpace(body)
	first, rest, _ := strings.Cut(body, "\n")
	first = strings.TrimRight(first, "\r")
	if len(first) > 200 {
		first = cut(first, 200)
		rest = "…"
	}
	if strings.TrimSpace(rest) != "" && !strings.HasSuffix(first, "…") {
		first += " …"
	}
	return strconv.Quote(first)
}

// cut returns s cut to at most n bytes on a rune boundary, marked "…".
func cut(s string, n int) string {
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// short returns a commit id's first 7 characters.
func short(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}

// etagTransport sends each GET with the ETag of the last 200 answer to
// the same URL (If-None-Match), so that GitHub answers 304 to an
// unchanged list, which does not count against the rate limit.
type etagTransport struct {
	next http.RoundTripper
	mu   sync.Mutex
	tags map[string]etagEntry
	// NotModified counts the 304 answers.
	notModified int
}

type etagEntry struct{ etag string }

// RoundTrip implements http.RoundTripper.
func (t *etagTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet {
		return t.next.RoundTrip(req)
	}
	key := req.URL.String()
	t.mu.Lock()
	e, ok := t.tags[key]
	t.mu.Unlock()
	if ok && req.Header.Get("If-None-Match") == "" {
		req = req.Clone(req.Context())
		req.Header.Set("If-None-Match", e.etag)
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case resp.StatusCode == http.StatusNotModified:
		t.notModified++
	case resp.StatusCode == http.StatusOK && resp.Header.Get("ETag") != "":
		t.tags[key] = etagEntry{etag: resp.Header.Get("ETag")}
	}
	return resp, nil
}

// NotModified returns how many answers were 304 (nothing changed).
func (p *Poller) NotModified() int {
	p.etags.mu.Lock()
	defer p.etags.mu.Unlock()
	return p.etags.notModified
}

// Run polls until ctx ends, the pull request is merged or closed, or
// emit returns false, handing each new event to emit as one line. It
// starts with the baseline's summary when the poller has not polled yet,
// or at once with a poll when it has (the tools poll once before they
// start the monitor, so that a pull request that does not exist is the
// call's error). A rate-limit answer is told and waited out, until the
// reset GitHub gives; another failed poll is told once (until it changes
// or a poll succeeds) and tried again at the next interval. note says how
// it ended when the pull request did; err is a pull request gone
// (ErrNotFound).
func (p *Poller) Run(ctx context.Context, emit func(string) bool) (note string, err error) {
	interval := max(p.cfg.Interval, time.Millisecond)
	limited := false
	wait := time.Duration(0)
	if p.primed { // the tool's first poll: tell its baseline, then wait
		if !emit(p.Baseline()) {
			return "", nil
		}
		if p.state == "merged" || p.state == "closed" {
			return fmt.Sprintf("%s was already %s", p.cfg.PR, p.state), nil
		}
		wait = interval
	}
	for {
		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return "", nil
			case <-t.C:
			}
		}
		wait = interval
		first := !p.primed
		lines, done, err := p.Poll(ctx)
		if err != nil && !first { // what the poll read before it failed is seen: tell it now
			for _, l := range lines {
				if !emit(l) {
					return "", nil
				}
			}
			lines = nil
		}
		var rl *RateLimitedError
		switch {
		case ctx.Err() != nil:
			return "", nil
		case errors.As(err, &rl):
			wait = max(time.Until(rl.Until), 0) + 10*time.Millisecond
			limit := ""
			if rl.Limit > 0 {
				limit = fmt.Sprintf(" (%d requests an hour)", rl.Limit)
			}
			if !emit(fmt.Sprintf("rate limited by GitHub%s: waiting until %s, then polling again", limit, rl.Until.UTC().Format("15:04:05 UTC"))) {
				return "", nil
			}
			limited = true
			continue
		case errors.Is(err, ErrNotFound):
			return "", err
		case err != nil:
			if msg := err.Error(); msg != p.lastErr {
				p.lastErr = msg
				if !emit("poll failed (trying again every " + interval.String() + "): " + msg) {
					return "", nil
				}
			}
			continue
		}
		p.lastErr = ""
		if limited {
			limited = false
			lines = append([]string{"rate limit over: polling again"}, lines...)
		}
		if first {
			lines = append([]string{p.Baseline()}, lines...)
		}
		for _, l := range lines {
			if !emit(l) {
				return "", nil
			}
		}
		if done {
			return fmt.Sprintf("%s was %s: the monitor ended", p.cfg.PR, p.state), nil
		}
	}
}
