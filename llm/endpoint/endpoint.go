// Package endpoint words a model server's errors for the person who
// runs troupe: what failed, where, and which setting to check.
package endpoint

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"syscall"
	"time"

	"github.com/troupe-dev/troupe/llm"
)

// Server is the model server a run talks to, for messages a user can
// act on.
type Server struct {
	Provider string // anthropic, openai
	URL      string // its base URL
	KeyVar   string // the variable holding its key
	URLVar   string // the variable that sets URL
}

// Of returns the server of provider ("anthropic", "openai")
// in the environment getenv reads; ok is false for providers without a
// server (scripted).
func Of(provider string, getenv func(string) string) (ep Server, ok bool) {
	switch provider {
	case "anthropic":
		return Server{"anthropic", cmp.Or(getenv("ANTHROPIC_BASE_URL"), "https://api.anthropic.com"), "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"}, true
	case "openai":
		return Server{"openai", cmp.Or(getenv("OPENAI_BASE_URL"), "https://api.openai.com/v1"), "OPENAI_API_KEY", "OPENAI_BASE_URL"}, true
	}
	return Server{}, false
}

// Name is how a message names the server: "the anthropic server at URL".
func (ep Server) Name() string {
	server := "the Anthropic API"
	if ep.Provider == "openai" {
		server = "the OpenAI-compatible server"
	}
	return server + " at " + ep.URL
}

// Explain words a model call's error for a user: what failed, where, and
// what to check. The original error stays wrapped (errors.Is and As see
// it) and is shown after the explanation.
func (ep Server) Explain(err error) error {
	if err == nil || errors.Is(err, context.Canceled) {
		return err
	}
	if why := ep.why(err); why != "" {
		return fmt.Errorf("%s (%w)", why, err)
	}
	return err
}

// why returns the explanation of err, "" when there is none to add.
func (ep Server) why(err error) string {
	var api *llm.APIError
	if errors.As(err, &api) {
		switch {
		case api.Status == 401:
			return fmt.Sprintf("%s refused the API key: check %s", ep.Name(), ep.KeyVar)
		case api.Status == 403:
			return fmt.Sprintf("%s refused the request (forbidden): check that %s may use this model", ep.Name(), ep.KeyVar)
		case api.Status == 404:
			return fmt.Sprintf("%s does not know this model or path: check --model and %s", ep.Name(), ep.URLVar)
		case api.Status == 429:
			return fmt.Sprintf("%s is rate limiting this key", ep.Name())
		case api.Status >= 500 || api.Type == "overloaded_error":
			return fmt.Sprintf("%s is failing or overloaded", ep.Name())
		}
		return ""
	}
	var dns *net.DNSError
	var op *net.OpError
	var ue *url.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Sprintf("cannot connect to %s: nothing listens there (is the server running? is %s right?)", ep.Name(), ep.URLVar)
	case errors.As(err, &dns):
		return fmt.Sprintf("cannot find the host of %s (check %s and the network)", ep.Name(), ep.URLVar)
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ue) && ue.Timeout()):
		return fmt.Sprintf("%s did not answer in time", ep.Name())
	case errors.As(err, &op):
		return fmt.Sprintf("cannot reach %s (check %s and the network)", ep.Name(), ep.URLVar)
	case errors.Is(err, llm.ErrBadResponse):
		return fmt.Sprintf("%s answered something that is not a valid response (is %s the right kind of server?)", ep.Name(), ep.URLVar)
	}
	return ""
}

// RetryLine is the progress line for a retry: what failed and when the
// next attempt is.
func (ep Server) RetryLine(err error) string {
	var re *llm.RetryError
	if !errors.As(err, &re) {
		return fmt.Sprintf("troupe: retrying after: %v", err)
	}
	why := ep.why(re.Err)
	if why == "" {
		why = fmt.Sprintf("%s: %v", ep.Name(), re.Err)
	}
	return fmt.Sprintf("troupe: %s; retry %d of %d in %s", why, re.Attempt, re.Max-1, re.Delay.Round(100*time.Millisecond))
}
