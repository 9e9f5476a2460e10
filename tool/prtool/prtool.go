// Package prtool holds subscribe_pr_activity and unsubscribe_pr_activity,
// the tools that watch a GitHub pull request's activity (reviews, review
// comments, comments, check runs, its merge or close) through a monitor
// task: each new event is a line that wakes the agent (docs/monitor.md,
// "Pull requests"). It is the one package that speaks to GitHub, through
// github.com/google/go-github, polling with ETags (a 304 answer costs no
// rate limit) and waiting out rate-limit answers.
//
// The monitors themselves are the session's: the tools start and stop
// them through Monitors, which session/kit implements on task.Registry.
package prtool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/tool"
)

// Tool names.
const (
	SubscribeName   = "subscribe_pr_activity"
	UnsubscribeName = "unsubscribe_pr_activity"
)

// Polling intervals of the tools.
const (
	DefaultInterval = 60 * time.Second
	MinInterval     = 10 * time.Second
	// UnauthenticatedInterval is the default without a token: GitHub
	// allows 60 requests an hour then, and counts the 304 answers too.
	UnauthenticatedInterval = 5 * time.Minute
)

// Source is the monitor source name of a pull request's monitor.
const Source = "github_pr"

// Watch is a monitor to start over a pull request.
type Watch struct {
	Description string
	ToolUseID   string
	Target      string         // owner/repo#number
	Filter      *regexp.Regexp // nil: every line wakes the agent
	// Lines produces the lines until the pull request ends (note says
	// so), ctx ends, or emit returns false; an error fails the monitor.
	Lines func(ctx context.Context, emit func(string) bool) (note string, err error)
}

// Running is a running monitor of a pull request.
type Running struct {
	ID     string
	Target string // owner/repo#number
}

// Monitors starts and stops the agent's monitors (session/kit has them on
// the task registry).
type Monitors interface {
	StartWatch(w Watch) (id string, err error)
	// Watching lists the agent's running monitors of pull requests.
	Watching() []Running
	StopWatch(ctx context.Context, id string) error
}

// Config configures the tools.
type Config struct {
	Monitors Monitors
	// BaseURL is the GitHub REST API's root ("" for https://api.github.com/).
	BaseURL string
	// Token returns the token and where it came from; nil uses
	// FindToken. An empty token polls unauthenticated.
	Token func(ctx context.Context) (token, from string)
	// HTTP is the HTTP client (nil: one with a 30 s timeout).
	HTTP *http.Client
	// Interval is the default polling interval (0: DefaultInterval).
	Interval time.Duration
}

// FindToken returns a GitHub token: GITHUB_TOKEN, else `gh auth token`
// when gh is on PATH and logged in, else "" (unauthenticated).
func FindToken(ctx context.Context) (token, from string) { return TokenFrom(os.Getenv)(ctx) }

// TokenFrom returns FindToken reading the environment through getenv.
func TokenFrom(getenv func(string) string) func(ctx context.Context) (token, from string) {
	return func(ctx context.Context) (string, string) {
		if t := strings.TrimSpace(getenv("GITHUB_TOKEN")); t != "" {
			return t, "GITHUB_TOKEN"
		}
		if path, err := exec.LookPath("gh"); err == nil {
			ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			if out, err := exec.CommandContext(ctx, path, "auth", "token").Output(); err == nil {
				if t := strings.TrimSpace(string(out)); t != "" {
					return t, "gh auth token"
				}
			}
		}
		return "", ""
	}
}

// Tools returns subscribe_pr_activity and unsubscribe_pr_activity.
func Tools(cfg Config) []tool.Tool {
	return []tool.Tool{&Subscribe{cfg: cfg}, &Unsubscribe{cfg: cfg}}
}

// Subscribe is subscribe_pr_activity.
type Subscribe struct{ cfg Config }

// Unsubscribe is unsubscribe_pr_activity.
type Unsubscribe struct{ cfg Config }

const subscribeDescription = `Watch a GitHub pull request and be woken by its activity: new reviews, review comments, comments, check runs of its head commit (each new state), new commits, and its merge or close. Each event reaches you as a line of a <task-notification> from the monitor task this returns (such as: review by alice: APPROVED "looks good"), even while you are idle; the monitor ends when the pull request is merged or closed, or when you call unsubscribe_pr_activity.

Name the pull request by url (https://github.com/OWNER/REPO/pull/N) or by owner, repo and pull_number. What is already there when you subscribe is summed up, not told one by one. GitHub is polled every interval_seconds (at least 10; default 60, or 300 without a GitHub token) with conditional requests, so with a token an unchanged pull request costs no rate limit; when GitHub's rate limit is hit the monitor says so and waits for its reset.`

const subscribeSchema = `{
  "type": "object",
  "properties": {
    "url": {"type": "string", "description": "The pull request's URL, such as https://github.com/octo/repo/pull/12 (or octo/repo#12)"},
    "owner": {"type": "string", "description": "The repository's owner (with repo and pull_number, instead of url)"},
    "repo": {"type": "string"},
    "pull_number": {"type": "integer", "minimum": 1},
    "filter": {"type": "string", "description": "Only events whose line matches this Go regular expression wake you (such as ^(review|check)); all without one"},
    "interval_seconds": {"type": "integer", "minimum": 10, "description": "Seconds between two polls (default 60)"}
  },
  "additionalProperties": false
}`

const unsubscribeDescription = `Stop watching a GitHub pull request: give the monitor's task_id that subscribe_pr_activity returned, or the pull request (url, or owner, repo and pull_number) to stop every monitor of it.`

const unsubscribeSchema = `{
  "type": "object",
  "properties": {
    "task_id": {"type": "string", "description": "The monitor task id subscribe_pr_activity returned"},
    "url": {"type": "string", "description": "The pull request's URL (or owner/repo#N)"},
    "owner": {"type": "string"},
    "repo": {"type": "string"},
    "pull_number": {"type": "integer", "minimum": 1}
  },
  "additionalProperties": false
}`

// Spec implements tool.Tool.
func (*Subscribe) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: SubscribeName, Description: subscribeDescription, InputSchema: json.RawMessage(subscribeSchema)}
}

// Spec implements tool.Tool.
func (*Unsubscribe) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: UnsubscribeName, Description: unsubscribeDescription, InputSchema: json.RawMessage(unsubscribeSchema)}
}

// ReadOnly implements tool.Tool: subscribing reads GitHub and changes
// nothing.
func (*Subscribe) ReadOnly(json.RawMessage) bool { return true }

// ReadOnly implements tool.Tool: it stops only a monitor of the agent's.
func (*Unsubscribe) ReadOnly(json.RawMessage) bool { return true }

type prInput struct {
	URL        string `json:"url"`
	Owner      string `json:"owner"`
	Repo       string `json:"repo"`
	PullNumber int    `json:"pull_number"`
}

// pr returns the pull request the input names.
func (in prInput) pr() (PR, error) {
	if strings.TrimSpace(in.URL) != "" {
		if in.Owner != "" || in.Repo != "" || in.PullNumber != 0 {
			return PR{}, errors.New("give either url or owner, repo and pull_number, not both")
		}
		return ParsePR(in.URL)
	}
	if in.Owner == "" || in.Repo == "" || in.PullNumber <= 0 {
		return PR{}, errors.New("name the pull request: url, or owner, repo and pull_number (all three)")
	}
	p := PR{Owner: strings.TrimSpace(in.Owner), Repo: strings.TrimSpace(in.Repo), Number: in.PullNumber}
	if !validName(p.Owner) || !validName(p.Repo) {
		return PR{}, fmt.Errorf("owner %q or repo %q is not a GitHub name (letters, digits, '-', '_', '.')", p.Owner, p.Repo)
	}
	return p, nil
}

// Run implements tool.Tool.
func (s *Subscribe) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	var in struct {
		prInput
		Filter          string `json:"filter"`
		IntervalSeconds *int   `json:"interval_seconds"`
	}
	if res, ok := tool.Decode(SubscribeName, call.Input, &in); !ok {
		return res, nil
	}
	if s.cfg.Monitors == nil {
		return tool.Errorf("%s: background tasks are not available in this session", SubscribeName), nil
	}
	pr, err := in.pr()
	if err != nil {
		return tool.Errorf("%s: %v", SubscribeName, err), nil
	}
	var filter *regexp.Regexp
	if in.Filter != "" {
		if filter, err = regexp.Compile(in.Filter); err != nil {
			return tool.Errorf("%s: filter is not a valid regular expression: %v", SubscribeName, err), nil
		}
	}
	find := s.cfg.Token
	if find == nil {
		find = FindToken
	}
	token, from := find(ctx)
	interval := s.cfg.Interval
	if interval <= 0 {
		interval = DefaultInterval
		if token == "" {
			interval = UnauthenticatedInterval
		}
	}
	if in.IntervalSeconds != nil {
		if *in.IntervalSeconds < int(MinInterval/time.Second) {
			return tool.Errorf("%s: interval_seconds must be at least %d, got %d", SubscribeName, int(MinInterval/time.Second), *in.IntervalSeconds), nil
		}
		interval = time.Duration(min(*in.IntervalSeconds, 86400)) * time.Second
	}
	p, err := NewPoller(PollConfig{PR: pr, Interval: interval, Token: token, BaseURL: s.cfg.BaseURL, HTTP: s.cfg.HTTP})
	if err != nil {
		return tool.Errorf("%s: %v", SubscribeName, err), nil
	}
	// The first poll, here: a pull request that does not exist, or a token
	// GitHub refuses, is this call's error, not a monitor's.
	_, _, err = p.Poll(ctx)
	var rl *RateLimitedError
	switch {
	case ctx.Err() != nil:
		return tool.Result{}, ctx.Err()
	case errors.As(err, &rl): // the monitor waits it out
	case err != nil:
		return tool.Errorf("%s: %s: %v", SubscribeName, pr, err), nil
	case p.state == "merged" || p.state == "closed":
		return tool.Result{Content: fmt.Sprintf("%s %q is already %s: nothing to watch.", pr, p.Title, p.state)}, nil
	}
	auth := "authenticated with the token from " + from
	if token == "" {
		auth = "unauthenticated (no GITHUB_TOKEN, and gh is not on PATH or not logged in): GitHub allows 60 requests an hour, about one poll every 5 minutes"
	}
	now := "not read yet: " + fmt.Sprint(err) // read before the monitor's goroutine polls again
	if rl == nil {
		now = p.Baseline()
	}
	id, err := s.cfg.Monitors.StartWatch(Watch{Description: "PR " + pr.String(), ToolUseID: call.ID, Target: pr.String(), Filter: filter,
		Lines: func(ctx context.Context, emit func(string) bool) (string, error) {
			if token == "" && !emit("note: polling "+auth) {
				return "", nil
			}
			return p.Run(ctx, emit)
		}})
	if err != nil {
		return tool.Errorf("%s: %v", SubscribeName, err), nil
	}
	which := "every event"
	if filter != nil {
		which = "events matching " + filter.String()
	}
	return tool.Result{Content: fmt.Sprintf("Monitor %s is watching %s, polling every %v, %s. Now: %s. You get %s as a notification from task %s, even while idle; it ends when the pull request is merged or closed, or with %s (task_id %s).",
		id, pr, interval, auth, now, which, id, UnsubscribeName, id)}, nil
}

// Run implements tool.Tool.
func (u *Unsubscribe) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	var in struct {
		prInput
		TaskID string `json:"task_id"`
	}
	if res, ok := tool.Decode(UnsubscribeName, call.Input, &in); !ok {
		return res, nil
	}
	if u.cfg.Monitors == nil {
		return tool.Errorf("%s: background tasks are not available in this session", UnsubscribeName), nil
	}
	running := u.cfg.Monitors.Watching()
	var stop []Running
	if id := strings.TrimSpace(in.TaskID); id != "" {
		if in.URL != "" || in.Owner != "" || in.Repo != "" || in.PullNumber != 0 {
			return tool.Errorf("%s: give either task_id or the pull request, not both", UnsubscribeName), nil
		}
		for _, r := range running {
			if r.ID == id {
				stop = append(stop, r)
			}
		}
		if len(stop) == 0 {
			return tool.Errorf("%s: %s is not a running pull request monitor of yours%s", UnsubscribeName, id, list(running)), nil
		}
	} else {
		pr, err := in.pr()
		if err != nil {
			return tool.Errorf("%s: give task_id, or %v", UnsubscribeName, err), nil
		}
		for _, r := range running {
			if strings.EqualFold(r.Target, pr.String()) {
				stop = append(stop, r)
			}
		}
		if len(stop) == 0 {
			return tool.Errorf("%s: no running monitor watches %s%s", UnsubscribeName, pr, list(running)), nil
		}
	}
	var done []string
	for _, r := range stop {
		if err := u.cfg.Monitors.StopWatch(ctx, r.ID); err != nil {
			return tool.Errorf("%s: stop %s: %v", UnsubscribeName, r.ID, err), nil
		}
		done = append(done, r.ID+" ("+r.Target+")")
	}
	return tool.Result{Content: "Stopped " + strings.Join(done, ", ") + ": no more polling."}, nil
}

// list names the running monitors for an error message.
func list(running []Running) string {
	if len(running) == 0 {
		return " (none is running)"
	}
	var parts []string
	for _, r := range running {
		parts = append(parts, r.ID+" "+r.Target)
	}
	return " (running: " + strings.Join(parts, ", ") + ")"
}

// ParsePR reads a pull request's name: its URL
// (https://github.com/OWNER/REPO/pull/N, with or without a trailing part
// such as /files, a query or a fragment; the host may be a GitHub
// Enterprise one) or the short form OWNER/REPO#N.
func ParsePR(s string) (PR, error) {
	s = strings.TrimSpace(s)
	bad := func(why string) (PR, error) {
		return PR{}, fmt.Errorf("%q is not a pull request (want https://github.com/OWNER/REPO/pull/N or OWNER/REPO#N): %s", s, why)
	}
	var owner, repo, num string
	if rest, ok := strings.CutPrefix(s, "https://"); ok || strings.HasPrefix(s, "http://") {
		if !ok {
			rest = strings.TrimPrefix(s, "http://")
		}
		if i := strings.IndexAny(rest, "?#"); i >= 0 {
			rest = rest[:i]
		}
		parts := strings.Split(rest, "/")
		if len(parts) < 5 {
			return bad("too few path parts")
		}
		if parts[3] != "pull" && parts[3] != "pulls" {
			return bad("no /pull/ in the path")
		}
		owner, repo, num = parts[1], parts[2], parts[4]
	} else {
		before, after, ok := strings.Cut(s, "#")
		if !ok {
			return bad("no #N")
		}
		o, r, ok := strings.Cut(before, "/")
		if !ok {
			return bad("no OWNER/REPO")
		}
		owner, repo, num = o, r, after
	}
	n, err := strconv.Atoi(num)
	if err != nil || n <= 0 || strings.HasPrefix(num, "+") {
		return bad(fmt.Sprintf("the number %q is not a positive integer", num))
	}
	if !validName(owner) || !validName(repo) {
		return bad("the owner or repository is not a GitHub name")
	}
	return PR{Owner: owner, Repo: repo, Number: n}, nil
}

// validName reports whether s may be a GitHub owner or repository name
// (letters, digits, '-', '_', '.'; not "." or "..").
func validName(s string) bool {
	if s == "" || s == "." || s == ".." || len(s) > 100 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}
