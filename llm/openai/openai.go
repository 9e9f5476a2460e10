// Package openai adapts the OpenAI Chat Completions API, and the many local
// servers that speak it (Ollama, vLLM, llama.cpp server, LM Studio), to
// llm.Model.
//
// Configuration comes from the caller: this package reads no environment
// variables. The troupe command fills Options.APIKey from OPENAI_API_KEY and
// Options.BaseURL from OPENAI_BASE_URL, and Options.Model from --model.
//
// Every call streams (stream: true with stream_options.include_usage). The
// mapping to the llm vocabulary:
//   - the system prompt is a system message;
//   - a user message's tool_result blocks become one tool message each
//     (placed first, as they must follow the assistant's tool_calls), with
//     "Error: " before the content when IsError, since the API has no error
//     flag; its text blocks become a user message;
//   - images in tool results: a tool message holds text only, so each
//     says how many pictures it returned, and the pictures follow in the
//     user message after the tool messages, as image_url parts with data
//     URLs, each group introduced by a text part naming its call id (the
//     convention of OpenAI-compatible agents); with Options.TextOnly they
//     stay a line of text in the tool message;
//   - an assistant message's text and tool_use blocks become one assistant
//     message with content and tool_calls;
//   - thinking blocks are dropped: Chat Completions has no equivalent input;
//   - tools are function tools whose parameters are the input schema.
//
// A response streams EventText deltas, EventThinking for the
// reasoning_content deltas that some compatible servers send, EventToolStart
// once a tool call's name is known, EventToolInput for its argument deltas,
// EventBlockStop per block, and EventDone. Tool arguments must be a JSON
// object (empty arguments mean {}); anything else fails the call with an
// error wrapping llm.ErrBadResponse that names the tool.
//
// Failures: HTTP and in-stream errors are *llm.APIError; a response that is
// not a well-formed completion stream (garbage, a stream cut before its
// finish reason) wraps llm.ErrBadResponse. Rate limits (except exhausted
// quota), 408, 409, 5xx, connection failures and cut streams are retried
// with exponential backoff that honours retry-after, but only while nothing
// has been yielded; an EventRetry precedes each retry.
//
// A Model is safe for concurrent use.
package openai

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/troupe-dev/troupe/llm"
)

// Defaults for Options.
const (
	// DefaultBaseURL is the OpenAI API.
	DefaultBaseURL = "https://api.openai.com/v1"
	// DefaultMaxRetries is the number of retries after the first attempt.
	DefaultMaxRetries = 4
	// DefaultRetryDelay is the first backoff delay; it doubles per retry.
	DefaultRetryDelay = 500 * time.Millisecond
	// DefaultMaxRetryDelay caps the backoff. A server asking, through
	// retry-after, for a longer wait than this gets no retry: the error,
	// with its RetryAfter, goes to the caller.
	DefaultMaxRetryDelay = 60 * time.Second
)

// placeholderKey is sent to servers that need no key: the SDK and some
// servers insist on an Authorization header.
const placeholderKey = "no-key"

// Options configures a Model. Zero fields take the defaults.
type Options struct {
	// APIKey is required with the OpenAI API (the command reads it from
	// OPENAI_API_KEY). Local servers at another BaseURL may need none.
	APIKey string
	// BaseURL is the API root, including /v1 (the command reads it from
	// OPENAI_BASE_URL), e.g. http://localhost:11434/v1 for Ollama. Default
	// DefaultBaseURL.
	BaseURL string
	// Model is the model id, required: there is no universal default.
	Model string
	// MaxTokens is the default output limit of a request; 0 leaves it to
	// the server. It is sent as max_completion_tokens to the OpenAI API and
	// as max_tokens, which every compatible server knows, to others.
	MaxTokens int
	// MaxRetries is the number of retries after the first attempt: 0 means
	// DefaultMaxRetries, a negative value none.
	MaxRetries int
	// RetryDelay is the first backoff delay. Default DefaultRetryDelay.
	RetryDelay time.Duration
	// MaxRetryDelay caps backoff and retry-after waits. Default
	// DefaultMaxRetryDelay.
	MaxRetryDelay time.Duration
	// ContextWindow, when positive, is reported by Info; otherwise Info
	// reports the window of known OpenAI models, or 0.
	ContextWindow int
	// TextOnly is for models that take no images: a picture in a tool
	// result is then sent as its description ("[image image/png, N
	// bytes]") instead of an image_url part.
	TextOnly bool
	// HTTPClient sends the requests. Default http.DefaultClient.
	HTTPClient *http.Client
	// Logger receives retries at Warn level. Default: discard.
	Logger *slog.Logger
}

// Model is an llm.Model on Chat Completions.
type Model struct {
	svc           openai.ChatCompletionService
	model         string
	official      bool // BaseURL is api.openai.com
	textOnly      bool
	maxTokens     int
	maxRetries    int
	retryDelay    time.Duration
	maxRetryDelay time.Duration
	window        int
	log           *slog.Logger
	now           func() time.Time
}

var _ llm.Model = (*Model)(nil)

// New returns a Model. It fails when Model is empty, when BaseURL does not
// parse, and, with the OpenAI API, when APIKey is empty (an error wrapping
// llm.ErrNoCredentials).
func New(opts Options) (*Model, error) {
	if opts.Model == "" {
		return nil, fmt.Errorf("openai: %w: give one (Options.Model), e.g. gpt-4.1 or, on a local server, the name it serves", llm.ErrNoModel)
	}
	base := strings.TrimSpace(opts.BaseURL)
	if base == "" {
		base = DefaultBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("openai: base URL %q (OPENAI_BASE_URL): want http(s)://host[/path]", opts.BaseURL)
	}
	official := isOpenAIHost(u.Hostname())
	key := opts.APIKey
	if key == "" {
		if official {
			return nil, fmt.Errorf("openai: %w: set OPENAI_API_KEY (or point OPENAI_BASE_URL at a local server that needs no key)", llm.ErrNoCredentials)
		}
		key = placeholderKey
	}
	m := &Model{
		model:         opts.Model,
		official:      official,
		textOnly:      opts.TextOnly,
		maxTokens:     opts.MaxTokens,
		maxRetries:    opts.MaxRetries,
		retryDelay:    opts.RetryDelay,
		maxRetryDelay: opts.MaxRetryDelay,
		window:        opts.ContextWindow,
		log:           opts.Logger,
		now:           time.Now,
	}
	switch {
	case m.maxRetries == 0:
		m.maxRetries = DefaultMaxRetries
	case m.maxRetries < 0:
		m.maxRetries = 0
	}
	if m.retryDelay <= 0 {
		m.retryDelay = DefaultRetryDelay
	}
	if m.maxRetryDelay <= 0 {
		m.maxRetryDelay = DefaultMaxRetryDelay
	}
	if m.window <= 0 {
		m.window = knownWindow(opts.Model)
	}
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	client := opts.HTTPClient
	if client == nil {
		client = http.DefaultClient
	}
	// The service is built from explicit options only: openai.NewClient
	// would read OPENAI_* variables from the environment.
	m.svc = openai.NewChatCompletionService(
		option.WithBaseURL(base),
		option.WithAPIKey(key),
		option.WithHTTPClient(client),
		option.WithMaxRetries(0), // Stream retries, to report each retry
	)
	return m, nil
}

// Info describes the provider and model.
func (m *Model) Info() llm.Info {
	return llm.Info{Provider: "openai", Model: m.model, ContextWindow: m.window}
}

func isOpenAIHost(host string) bool {
	host = strings.ToLower(host)
	return host == "api.openai.com" || strings.HasSuffix(host, ".api.openai.com")
}

// knownWindows are the context windows of well-known OpenAI models, by
// prefix of their ids, the most specific first. Their prices are in the
// one price list, budget.DefaultPrices.
var knownWindows = []struct {
	prefix string
	tokens int
}{
	{"gpt-4.1", 1_047_576},
	{"gpt-4o", 128_000},
	{"gpt-5-chat", 128_000},
	{"gpt-5", 400_000},
	{"o3", 200_000},
	{"o4-mini", 200_000},
}

// knownWindow returns the context window of well-known OpenAI models, 0 for
// the rest.
func knownWindow(model string) int {
	for _, w := range knownWindows {
		if strings.HasPrefix(model, w.prefix) {
			return w.tokens
		}
	}
	return 0
}

// Models returns the model ids (or id prefixes) the package knows the
// window of. There is no default model: Options.Model is required.
func Models() []string {
	var out []string
	for _, w := range knownWindows {
		out = append(out, w.prefix)
	}
	return out
}
