package webtool

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/tool"
)

// WebFetch defaults.
const (
	DefaultTimeout      = 30 * time.Second
	DefaultMaxBytes     = 10 << 20 // 10 MiB
	DefaultMaxRedirects = 10
	// DefaultMaxContent is how much of a page's Markdown the model's
	// question is asked of, in bytes.
	DefaultMaxContent = 100_000
	maxURLLength      = 2000
	userAgent         = "troupe-WebFetch/1 (+https://github.com/troupe-dev/troupe)"
)

// FetchConfig configures WebFetch. Zero values take the defaults.
type FetchConfig struct {
	// Model answers the call's prompt about the page, once per call;
	// ModelName is the model id ("" for the provider's default).
	Model     llm.Model
	ModelName string
	// Allows reports whether an allow rule names host exactly
	// (permission.Policy.NamesHost): only then may a fetch connect to a
	// loopback, private or link-local address of host. Nil names none.
	Allows func(host string) bool
	// Resolver looks host names up; nil is net.DefaultResolver.
	Resolver Resolver
	// Timeout bounds one fetch with its redirects (not the model's
	// answer).
	Timeout      time.Duration
	MaxBytes     int64 // the largest body fetched
	MaxRedirects int   // same-host redirects followed
	MaxContent   int   // bytes of Markdown passed to the model
	CacheTTL     time.Duration
	CacheBytes   int
	Now          func() time.Time
}

// Fetch is the WebFetch tool.
type Fetch struct {
	cfg    FetchConfig
	client *http.Client
	cache  *cache
}

var _ tool.Tool = (*Fetch)(nil)

// NewFetch returns the WebFetch tool.
func NewFetch(cfg FetchConfig) *Fetch {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.MaxRedirects <= 0 {
		cfg.MaxRedirects = DefaultMaxRedirects
	}
	if cfg.MaxContent <= 0 {
		cfg.MaxContent = DefaultMaxContent
	}
	if cfg.CacheTTL <= 0 {
		cfg.CacheTTL = DefaultCacheTTL
	}
	if cfg.CacheBytes <= 0 {
		cfg.CacheBytes = DefaultCacheBytes
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Resolver == nil {
		cfg.Resolver = net.DefaultResolver
	}
	d := &dialer{resolver: cfg.Resolver, allows: cfg.Allows, net: net.Dialer{Timeout: cfg.Timeout}}
	tr := &http.Transport{
		Proxy:                 nil, // a proxy would connect where the dialer cannot see
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: cfg.Timeout,
		// No connection outlives its call: no idle goroutines to own,
		// and every request dials (and so is checked) afresh.
		DisableKeepAlives: true,
	}
	f := &Fetch{cfg: cfg, cache: newCache(cfg.CacheTTL, cfg.CacheBytes, cfg.Now)}
	f.client = &http.Client{Transport: tr, CheckRedirect: f.checkRedirect}
	return f
}

// errTooManyRedirects stops a redirect chain past MaxRedirects.
var errTooManyRedirects = errors.New("too many redirects")

// checkRedirect follows a redirect on the same host (not from https to
// http) up to MaxRedirects; any other stops with the redirect response,
// which Run hands back to the model.
func (f *Fetch) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > f.cfg.MaxRedirects {
		return errTooManyRedirects
	}
	prev := via[len(via)-1].URL
	if !sameHost(prev, req.URL) {
		return http.ErrUseLastResponse
	}
	return nil
}

// sameHost reports whether a redirect from a to b stays on a's host,
// with or without "www.", and does not leave https.
func sameHost(a, b *url.URL) bool {
	if a.Scheme == "https" && b.Scheme != "https" {
		return false
	}
	ha, hb := strings.ToLower(a.Hostname()), strings.ToLower(b.Hostname())
	return strings.TrimPrefix(ha, "www.") == strings.TrimPrefix(hb, "www.")
}

//go:embed webfetch.md
var fetchDescription string

const fetchSchema = `{
  "type": "object",
  "properties": {
    "url": {"type": "string", "format": "uri", "description": "The URL to fetch content from"},
    "prompt": {"type": "string", "description": "The prompt to run on the fetched content"}
  },
  "required": ["url", "prompt"],
  "additionalProperties": false
}`

// Spec implements tool.Tool.
func (*Fetch) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "WebFetch", Description: fetchDescription, InputSchema: json.RawMessage(fetchSchema)}
}

// ReadOnly implements tool.Tool: a fetch changes nothing here.
func (*Fetch) ReadOnly(json.RawMessage) bool { return true }

type fetchInput struct {
	URL    string `json:"url"`
	Prompt string `json:"prompt"`
}

// Run implements tool.Tool.
func (f *Fetch) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	var in fetchInput
	if res, ok := tool.Decode("WebFetch", call.Input, &in); !ok {
		return res, nil
	}
	u, res := checkURL(in.URL)
	if u == nil {
		return res, nil
	}
	if strings.TrimSpace(in.Prompt) == "" {
		return tool.Errorf("WebFetch: prompt is empty: say what to find or extract in the page"), nil
	}
	key := u.String()
	p, cached := f.cache.get(key)
	if !cached {
		var stop *tool.Result
		var err error
		p, stop, err = f.fetch(ctx, u, in.Prompt)
		switch {
		case err != nil:
			return tool.Result{}, err
		case stop != nil: // a failure or a redirect to another host
			return *stop, nil
		}
		f.cache.put(p)
	}
	answer, err := f.ask(ctx, p, in.Prompt)
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, context.Cause(ctx)
		}
		return tool.Errorf("WebFetch: fetched %s but the model could not answer about it: %v", p.final, err), nil
	}
	return tool.Result{Content: answer}, nil
}

// checkURL validates the model's URL; nil with an error Result when it
// is not one WebFetch takes.
func checkURL(raw string) (*url.URL, tool.Result) {
	raw = strings.TrimSpace(raw)
	switch {
	case raw == "":
		return nil, tool.Errorf("WebFetch: url is empty: give a full http:// or https:// URL")
	case len(raw) > maxURLLength:
		return nil, tool.Errorf("WebFetch: url is %d characters long; at most %d are taken", len(raw), maxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, tool.Errorf("WebFetch: url %q does not parse: %v", raw, err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, tool.Errorf("WebFetch: url %q: scheme must be http or https, not %q", raw, u.Scheme)
	case u.Hostname() == "":
		return nil, tool.Errorf("WebFetch: url %q has no host: give a full URL such as https://example.com/page", raw)
	case u.User != nil:
		return nil, tool.Errorf("WebFetch: url %q holds a user name or password; WebFetch does not send credentials", raw)
	}
	u.Fragment = ""
	return u, tool.Result{}
}

// fetch GETs u and converts it. A failure the model should see comes
// back as a Result; a Go error only when ctx ended.
func (f *Fetch) fetch(ctx context.Context, u *url.URL, prompt string) (page, *tool.Result, error) {
	fail := func(format string, args ...any) (page, *tool.Result, error) {
		r := tool.Errorf("WebFetch: "+format, args...)
		return page{}, &r, nil
	}
	fctx, cancel := context.WithTimeout(ctx, f.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(fctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return fail("url %s: %v", u, err)
	}
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Accept", "text/markdown, text/html;q=0.9, text/plain;q=0.8, */*;q=0.1")
	resp, err := f.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return page{}, nil, context.Cause(ctx)
		}
		var blocked *BlockedError
		switch {
		case errors.As(err, &blocked):
			return fail("refused %s: %v", u, blocked)
		case errors.Is(err, errTooManyRedirects):
			return fail("%s redirected more than %d times on its host; stopped", u, f.cfg.MaxRedirects)
		case errors.Is(err, context.DeadlineExceeded):
			return fail("%s did not answer within %s", u, f.cfg.Timeout)
		}
		return fail("GET %s: %v", u, unwrapURLError(err))
	}
	defer resp.Body.Close()
	final := resp.Request.URL
	if isRedirect(resp.StatusCode) {
		loc, err := final.Parse(resp.Header.Get("Location"))
		if err != nil || resp.Header.Get("Location") == "" {
			return fail("%s answered %s without a usable Location", final, resp.Status)
		}
		r := tool.Result{Content: redirectNote(u, loc, resp.Status, prompt)}
		return page{}, &r, nil
	}
	if resp.StatusCode >= 400 {
		return fail("GET %s: HTTP %s", final, resp.Status)
	}
	if resp.ContentLength > f.cfg.MaxBytes {
		return fail("%s is %d bytes, more than the %d-byte cap; fetch a smaller page", final, resp.ContentLength, f.cfg.MaxBytes)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, f.cfg.MaxBytes+1))
	if err != nil {
		if ctx.Err() != nil {
			return page{}, nil, context.Cause(ctx)
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return fail("%s did not finish within %s", final, f.cfg.Timeout)
		}
		return fail("read %s: %v", final, err)
	}
	if int64(len(body)) > f.cfg.MaxBytes {
		return fail("%s is larger than the %d-byte cap; fetch a smaller page", final, f.cfg.MaxBytes)
	}
	md, err := Markdown(body, resp.Header.Get("Content-Type"), final.String())
	if err != nil {
		return fail("%s: %v", final, err)
	}
	return page{url: u.String(), final: final.String(), markdown: truncate(md, f.cfg.MaxContent), bytes: len(body)}, nil, nil
}

func isRedirect(status int) bool {
	switch status {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// unwrapURLError drops *url.Error's "Get URL:" prefix, which the message
// already says.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// redirectNote is what the model gets for a redirect to another host: a
// new call to make, which its permission rules judge afresh.
func redirectNote(from, to *url.URL, status, prompt string) string {
	q, _ := json.Marshal(prompt)
	return fmt.Sprintf(`REDIRECT DETECTED: the URL redirects to a different host.

Original URL: %s
Redirect URL: %s
Status: %s

WebFetch does not follow a redirect to another host by itself. To fetch the page, call WebFetch again with:
- url: %q
- prompt: %s`, from, to, status, to.String(), q)
}

// ask puts the call's prompt to the model about p and returns its answer.
func (f *Fetch) ask(ctx context.Context, p page, prompt string) (string, error) {
	if f.cfg.Model == nil {
		return "", errors.New("no model is configured")
	}
	msg := fmt.Sprintf("Web page content (from %s):\n---\n%s\n---\n\n%s\n\n%s", p.final, p.markdown, prompt, answerRules)
	resp, err := llm.Complete(ctx, f.cfg.Model, llm.Request{Model: f.cfg.ModelName, System: askSystem,
		Messages: []llm.Message{llm.UserText(msg)}, MaxTokens: 4096, NoCache: true})
	if err != nil {
		return "", err
	}
	answer := strings.TrimSpace(resp.Message.Text())
	if answer == "" {
		return "", fmt.Errorf("the answer was empty (stop reason %s)", resp.StopReason)
	}
	return answer, nil
}

const askSystem = "You answer a question about one web page for another AI agent, using only the page's content."

const answerRules = `Answer the request above from the page's content only, concisely. Quote exactly where wording matters, and at most a few short quotations. If the page does not hold the answer, say so.`
