// Package anthropic is the llm.Model of Anthropic's Messages API, built on
// the official Go SDK's streaming API.
//
// New takes plain values and reads no environment variable and no profile
// file: cmd passes $ANTHROPIC_API_KEY and $ANTHROPIC_BASE_URL in through
// Options.
//
// Stream converts an llm.Request to Messages API parameters, streams the
// answer as llm events and ends with one EventDone carrying the
// accumulated llm.Response. Unless the request sets NoCache, it marks
// three prompt-cache breakpoints (the system prompt, the last tool and the
// last cacheable block of the conversation) so that the next turn of the
// same conversation reads its prefix from the cache.
//
// A ThinkingBudget turns thinking on: adaptive thinking with summarized
// display for current models (which reject a budget), a budget_tokens
// budget for older ones (Claude 4.5 and before). With no budget the model's
// default applies. Messages with role "system" are sent as the API's
// mid-conversation system messages; Temperature is sent as is, though
// current models reject anything but the default.
//
// Failures:
//   - errors the server reports become *llm.APIError;
//   - rate limits (429), overload (529), other 5xx, in-stream overload
//     events and connection errors are retried, with exponential backoff
//     or the server's retry-after, but only while nothing of the attempt
//     has been yielded; an EventRetry precedes each retry;
//   - a stream cut after content was yielded, a body that is not a valid
//     event stream, and a tool_use whose input is not valid JSON end the
//     sequence with an error wrapping llm.ErrBadResponse;
//   - canceling ctx ends the sequence with an error wrapping
//     context.Cause(ctx).
//
// A *Model is safe for concurrent use.
package anthropic

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/troupe-dev/troupe/llm"
)

// Defaults of Options.
const (
	DefaultModel          = anthropic.ModelClaudeSonnet5_5
	DefaultMaxTokens      = 8192
	DefaultMaxRetries     = 4
	DefaultRetryBaseDelay = 500 * time.Millisecond
	DefaultRetryMaxDelay  = 60 * time.Second
	// DefaultContextWindow is the context window of a model missing from
	// the package's model table.
	DefaultContextWindow = 200_000
)

// Options configures a Model. Zero fields take the Default… values.
type Options struct {
	// APIKey is sent as x-api-key. It is required; cmd passes
	// $ANTHROPIC_API_KEY.
	APIKey string
	// BaseURL is the API's address, without /v1; empty means
	// https://api.anthropic.com. cmd passes $ANTHROPIC_BASE_URL.
	BaseURL string
	// Model is the model id used when a request names none.
	Model string
	// MaxTokens is the output limit used when a request sets none.
	MaxTokens int
	// MaxRetries is how many times a failed call is repeated; negative
	// means never.
	MaxRetries int
	// RetryBaseDelay is the first backoff delay; it doubles each retry up
	// to RetryMaxDelay. A retry-after from the server replaces the
	// backoff; one longer than RetryMaxDelay is not waited for, and the
	// error is returned instead.
	RetryBaseDelay time.Duration
	RetryMaxDelay  time.Duration
	// ContextWindow overrides the context window that Info reports.
	ContextWindow int
	// HTTPClient sends the requests; nil means a client with the SDK's
	// default transport.
	HTTPClient *http.Client
	// Logger receives retries and malformed responses; nil discards.
	Logger *slog.Logger
}

// Model is an llm.Model backed by the Messages API.
type Model struct {
	client     anthropic.Client
	model      string
	maxTokens  int
	maxRetries int
	baseDelay  time.Duration
	maxDelay   time.Duration
	window     int
	log        *slog.Logger
}

var _ llm.Model = (*Model)(nil)

// New returns a Model. It fails with an error wrapping
// llm.ErrNoCredentials when opts.APIKey is empty.
func New(opts Options) (*Model, error) {
	if opts.APIKey == "" {
		return nil, fmt.Errorf("anthropic: %w: set ANTHROPIC_API_KEY", llm.ErrNoCredentials)
	}
	m := &Model{
		model:      cmp.Or(opts.Model, DefaultModel),
		maxTokens:  cmp.Or(opts.MaxTokens, DefaultMaxTokens),
		maxRetries: cmp.Or(opts.MaxRetries, DefaultMaxRetries),
		baseDelay:  cmp.Or(opts.RetryBaseDelay, DefaultRetryBaseDelay),
		maxDelay:   cmp.Or(opts.RetryMaxDelay, DefaultRetryMaxDelay),
		log:        opts.Logger,
	}
	m.maxRetries = max(m.maxRetries, 0)
	m.window = cmp.Or(opts.ContextWindow, contextWindow(m.model), DefaultContextWindow)
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	copts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithAPIKey(opts.APIKey),
		// Stream retries itself, so that it can tell callers (EventRetry)
		// and also retry failures that arrive inside a stream.
		option.WithMaxRetries(0),
	}
	if opts.BaseURL != "" {
		copts = append(copts, option.WithBaseURL(opts.BaseURL))
	}
	if opts.HTTPClient != nil {
		copts = append(copts, option.WithHTTPClient(opts.HTTPClient))
	} else {
		copts = append(copts, option.WithHTTPClient(&http.Client{Transport: defaultTransport()}))
	}
	m.client = anthropic.NewClient(copts...)
	return m, nil
}

// defaultTransport is the SDK's default: http.DefaultTransport with a
// bound on the wait for response headers, so a server that accepts the
// connection and never answers cannot hang a call.
func defaultTransport() http.RoundTripper {
	t, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return http.DefaultTransport
	}
	t = t.Clone()
	t.ResponseHeaderTimeout = 10 * time.Minute
	return t
}

// Info describes the default model.
func (m *Model) Info() llm.Info {
	return llm.Info{Provider: "anthropic", Model: m.model, ContextWindow: m.window}
}

// Stream sends req and yields its events; see the package documentation.
func (m *Model) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		params, opts, err := m.params(req)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		log := m.log.With("model", params.Model)
		for attempt := 0; ; attempt++ {
			res := m.attempt(ctx, params, opts, yield)
			if res.err == nil {
				return // done, or the caller stopped
			}
			if ctx.Err() != nil {
				yield(llm.Event{}, fmt.Errorf("anthropic: %w", context.Cause(ctx)))
				return
			}
			delay, ok := m.retryDelay(attempt, res)
			if !ok {
				log.WarnContext(ctx, "anthropic: call failed", "attempt", attempt+1, "err", res.err)
				yield(llm.Event{}, res.err)
				return
			}
			retryErr := &llm.RetryError{Provider: "anthropic", Attempt: attempt + 1, Max: m.maxRetries + 1, Delay: delay, Err: res.err}
			log.WarnContext(ctx, "anthropic: retrying", "attempt", attempt+1, "delay", delay, "err", res.err)
			if !yield(llm.Event{Type: llm.EventRetry, Err: retryErr}, nil) {
				return
			}
			if err := sleep(ctx, delay); err != nil {
				yield(llm.Event{}, fmt.Errorf("anthropic: %w", err))
				return
			}
		}
	}
}

// sleep waits d or until ctx ends, returning context.Cause(ctx) then.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return context.Cause(ctx)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
