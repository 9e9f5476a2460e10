package anthropic

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/troupe-dev/troupe/llm"
)

// classify turns the error that ended a stream into an attempt result.
func classify(err error, s *streamState) attemptResult {
	if aerr, ok := errors.AsType[*anthropic.Error](err); ok {
		ae := apiError(aerr)
		r := attemptResult{err: ae, yielded: s.yielded, retryable: ae.Retryable()}
		if ae.Status != 0 && aerr.Response != nil {
			h := aerr.Response.Header
			switch h.Get("x-should-retry") {
			case "true":
				r.retryable = true
			case "false":
				r.retryable = false
			}
			r.retryAfter, r.hasRetryAfter = retryAfter(h, time.Now())
		}
		return r
	}
	if undecodable(err) {
		return attemptResult{err: badResponse("%v", err), yielded: s.yielded}
	}
	// Anything else is the connection failing: before the response, or
	// cutting it.
	if s.events == 0 {
		return attemptResult{err: fmt.Errorf("anthropic: %w", err), retryable: true}
	}
	return attemptResult{err: fmt.Errorf("anthropic: %w: stream cut: %w", llm.ErrBadResponse, err), yielded: s.yielded, retryable: true}
}

// undecodable reports whether err says the body could not be decoded, as
// opposed to read.
func undecodable(err error) bool {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	return errors.As(err, &syn) || errors.As(err, &typ) || errors.Is(err, bufio.ErrTooLong)
}

// apiError converts the SDK's error. An error event inside a 200 stream
// gets Status 0.
func apiError(e *anthropic.Error) *llm.APIError {
	ae := &llm.APIError{
		Provider:  "anthropic",
		Type:      string(e.Type()),
		Message:   e.Message,
		RequestID: e.RequestID,
	}
	if e.StatusCode >= 400 {
		ae.Status = e.StatusCode
		if e.Response != nil {
			ae.RetryAfter, _ = retryAfter(e.Response.Header, time.Now())
		}
	}
	if ae.Message == "" {
		ae.Message = strings.TrimSpace(e.RawJSON())
		if len(ae.Message) > 200 {
			ae.Message = ae.Message[:200] + "…"
		}
	}
	if ae.Message == "" {
		ae.Message = http.StatusText(e.StatusCode)
	}
	return ae
}

// retryAfter reads retry-after-ms, or retry-after in seconds or as an HTTP
// date.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// retryDelay says whether attempt (0-based), which ended with r, is
// retried, and after how long.
func (m *Model) retryDelay(attempt int, r attemptResult) (time.Duration, bool) {
	if !r.retryable || r.yielded || attempt >= m.maxRetries {
		return 0, false
	}
	if r.hasRetryAfter {
		if r.retryAfter > m.maxDelay {
			return 0, false
		}
		return r.retryAfter, true
	}
	d := m.maxDelay
	if attempt < 30 {
		d = min(m.baseDelay<<attempt, m.maxDelay)
	}
	if d > 0 {
		d -= rand.N(d/4 + 1) // jitter, so clients that failed together spread out
	}
	return d, true
}
