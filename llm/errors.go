package llm

import (
	"errors"
	"fmt"
	"time"
)

// Sentinel errors.
var (
	// ErrNoResponse means a stream ended without EventDone.
	ErrNoResponse = errors.New("llm: stream ended without a response")
	// ErrNoCredentials means the provider has no API key configured.
	ErrNoCredentials = errors.New("llm: no credentials")
	// ErrBadResponse means the server answered something that is not a
	// valid response (garbage, a cut stream, a malformed tool input).
	ErrBadResponse = errors.New("llm: malformed response")
	// ErrNoModel means no model name was given where the provider has no
	// default (an OpenAI-compatible server).
	ErrNoModel = errors.New("llm: no model name")
)

// RetryError is the Err of an EventRetry: attempt Attempt of Max failed
// with Err, and the call is repeated after Delay.
type RetryError struct {
	Provider     string
	Attempt, Max int
	Delay        time.Duration
	Err          error
}

func (e *RetryError) Error() string {
	return fmt.Sprintf("%s: attempt %d of %d failed, retrying in %v: %v", e.Provider, e.Attempt, e.Max, e.Delay, e.Err)
}

// Unwrap returns the attempt's error.
func (e *RetryError) Unwrap() error { return e.Err }

// APIError is an error the provider's server returned.
type APIError struct {
	Provider   string
	Status     int    // HTTP status; 0 when the error came inside a stream
	Type       string // provider error type, e.g. "overloaded_error", "rate_limit_error"
	Message    string
	RetryAfter time.Duration // from a retry-after header, when given
	RequestID  string
}

func (e *APIError) Error() string {
	s := fmt.Sprintf("%s: %s", e.Provider, e.Message)
	if e.Type != "" {
		s = fmt.Sprintf("%s: %s: %s", e.Provider, e.Type, e.Message)
	}
	if e.Status != 0 {
		s += fmt.Sprintf(" (HTTP %d)", e.Status)
	}
	if e.RequestID != "" {
		s += " request " + e.RequestID
	}
	return s
}

// Retryable reports whether the call may succeed if repeated: rate limits,
// overload and server errors.
func (e *APIError) Retryable() bool {
	switch {
	case e.Status == 429, e.Status == 408, e.Status == 409, e.Status >= 500:
		return true
	case e.Type == "overloaded_error", e.Type == "rate_limit_error", e.Type == "api_error":
		return true
	}
	return false
}
