// Package prtooltest is a local fake of the part of GitHub's REST API
// that tool/prtool polls: one pull request, its issue comments, review
// comments, reviews and the check runs of its head commit. It answers
// conditional requests (If-None-Match) with 304 when a list is unchanged,
// and can answer with a primary rate limit (403, X-RateLimit-Remaining 0).
package prtooltest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Fake is a fake GitHub serving one pull request, Owner/Repo#Number.
type Fake struct {
	Owner, Repo string
	Number      int
	URL         string // the API root, for prtool's BaseURL

	mu         sync.Mutex
	version    int // bumped by every change: the ETags
	title      string
	state      string
	merged     bool
	mergedBy   string
	head       string
	comments   []map[string]any
	rcomments  []map[string]any
	reviews    []map[string]any
	checks     []map[string]any
	nextID     int64
	limitSkip  int // requests answered before the limit starts
	limitNext  int
	limitReset time.Time
	retryAfter int // seconds, for a secondary limit (429, Retry-After)
	requests   []Request
}

// Request is one request the fake received.
type Request struct {
	Path        string
	IfNoneMatch string
	Auth        string
	Status      int
	At          time.Time
}

// New starts a fake of octo/repo#7, open with head commit "aaaaaaa1…",
// closed with the test.
func New(t testing.TB) *Fake {
	f := &Fake{Owner: "octo", Repo: "repo", Number: 7, title: "Add the widget", state: "open",
		head: "aaaaaaa1111111111111111111111111111111111", nextID: 100}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	f.URL = srv.URL + "/"
	return f
}

func (f *Fake) user(login string) map[string]any { return map[string]any{"login": login} }

// AddComment adds an issue comment.
func (f *Fake) AddComment(login, body string) {
	f.change(func() {
		f.comments = append(f.comments, map[string]any{"id": f.id(), "user": f.user(login), "body": body})
	})
}

// AddReviewComment adds a review comment on path:line.
func (f *Fake) AddReviewComment(login, path string, line int, body string) {
	f.change(func() {
		f.rcomments = append(f.rcomments, map[string]any{"id": f.id(), "user": f.user(login), "body": body, "path": path, "line": line})
	})
}

// AddReview adds a review in state (APPROVED, CHANGES_REQUESTED,
// COMMENTED, PENDING).
func (f *Fake) AddReview(login, state, body string) {
	f.change(func() {
		f.reviews = append(f.reviews, map[string]any{"id": f.id(), "user": f.user(login), "state": state, "body": body})
	})
}

// SetCheck adds or updates the check run name of the head commit.
func (f *Fake) SetCheck(name, status, conclusion string) {
	f.change(func() {
		for _, c := range f.checks {
			if c["name"] == name && c["head_sha"] == f.head {
				c["status"], c["conclusion"] = status, conclusion
				return
			}
		}
		f.checks = append(f.checks, map[string]any{"id": f.id(), "name": name, "status": status, "conclusion": conclusion, "head_sha": f.head})
	})
}

// Push moves the head to sha.
func (f *Fake) Push(sha string) { f.change(func() { f.head = sha }) }

// Merge merges the pull request as login.
func (f *Fake) Merge(login string) {
	f.change(func() { f.state, f.merged, f.mergedBy = "closed", true, login })
}

// RateLimit answers the next n requests with a primary rate limit that
// resets at reset.
func (f *Fake) RateLimit(n int, reset time.Time) { f.RateLimitAfter(0, n, reset) }

// RateLimitAfter answers skip requests as usual, then n with a primary
// rate limit that resets at reset.
func (f *Fake) RateLimitAfter(skip, n int, reset time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.limitSkip, f.limitNext, f.limitReset, f.retryAfter = skip, n, reset, 0
}

// RetryAfter answers the next n requests with 429 and Retry-After: secs
// (a secondary rate limit, without X-RateLimit-Remaining: 0).
func (f *Fake) RetryAfter(n, secs int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.limitSkip, f.limitNext, f.retryAfter = 0, n, secs
}

// Requests returns the requests received so far.
func (f *Fake) Requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Request(nil), f.requests...)
}

func (f *Fake) change(do func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	do()
	f.version++
}

func (f *Fake) id() int64 { f.nextID++; return f.nextID }

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	req := Request{Path: r.URL.Path, IfNoneMatch: r.Header.Get("If-None-Match"), Auth: r.Header.Get("Authorization"), At: time.Now()}
	status := f.answer(w, r)
	req.Status = status
	f.requests = append(f.requests, req)
}

// answer writes the answer to r and returns its status.
func (f *Fake) answer(w http.ResponseWriter, r *http.Request) int {
	h := w.Header()
	if f.limitNext > 0 && f.limitSkip > 0 {
		f.limitSkip--
	} else if f.limitNext > 0 && f.retryAfter > 0 {
		f.limitNext--
		h.Set("Retry-After", strconv.Itoa(f.retryAfter))
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, `{"message": "You have exceeded a secondary rate limit"}`)
		return http.StatusTooManyRequests
	} else if f.limitNext > 0 {
		f.limitNext--
		h.Set("X-RateLimit-Limit", "60")
		h.Set("X-RateLimit-Remaining", "0")
		h.Set("X-RateLimit-Reset", strconv.FormatInt(f.limitReset.Unix(), 10))
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `{"message": "API rate limit exceeded"}`)
		return http.StatusForbidden
	}
	h.Set("X-RateLimit-Limit", "60")
	h.Set("X-RateLimit-Remaining", "59")
	h.Set("X-RateLimit-Reset", strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10))
	base := fmt.Sprintf("/repos/%s/%s/", f.Owner, f.Repo)
	var body any
	switch p := r.URL.Path; p {
	case base + fmt.Sprintf("pulls/%d", f.Number):
		pr := map[string]any{"number": f.Number, "title": f.title, "state": f.state, "merged": f.merged,
			"head": map[string]any{"sha": f.head, "ref": "widget"}}
		if f.mergedBy != "" {
			pr["merged_by"] = f.user(f.mergedBy)
		}
		body = pr
	case base + fmt.Sprintf("issues/%d/comments", f.Number):
		body = nonNil(f.comments)
	case base + fmt.Sprintf("pulls/%d/comments", f.Number):
		body = nonNil(f.rcomments)
	case base + fmt.Sprintf("pulls/%d/reviews", f.Number):
		body = nonNil(f.reviews)
	default:
		sha, ok := checkRunsSHA(p, base)
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"message": "Not Found"}`)
			return http.StatusNotFound
		}
		var runs []map[string]any
		for _, c := range f.checks {
			if c["head_sha"] == sha {
				runs = append(runs, c)
			}
		}
		body = map[string]any{"total_count": len(runs), "check_runs": nonNil(runs)}
	}
	etag := fmt.Sprintf(`"v%d"`, f.version)
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return http.StatusNotModified
	}
	h.Set("ETag", etag)
	h.Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(body)
	return http.StatusOK
}

func nonNil(l []map[string]any) []map[string]any {
	if l == nil {
		return []map[string]any{}
	}
	return l
}

// checkRunsSHA returns the commit of a path base+"commits/SHA/check-runs".
func checkRunsSHA(p, base string) (string, bool) {
	var sha string
	rest, ok := strings.CutPrefix(p, base+"commits/")
	if !ok {
		return "", false
	}
	for i := 0; i < len(rest); i++ {
		if rest[i] == '/' {
			sha, rest = rest[:i], rest[i:]
			break
		}
	}
	return sha, sha != "" && rest == "/check-runs"
}
