package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/troupe-dev/troupe/llm"
)

// failure is a failed attempt: the error to report and whether another
// attempt may succeed.
type failure struct {
	err      error
	retry    bool
	after    time.Duration // the server's retry-after, when hasAfter
	hasAfter bool
}

// classify turns an error of the SDK stream into a failure. raw is the HTTP
// response, nil when none arrived.
func (m *Model) classify(ctx context.Context, err error, raw *http.Response) failure {
	if ctx.Err() != nil {
		return failure{err: fmt.Errorf("openai: %w", context.Cause(ctx))}
	}
	var oe *openai.Error
	if errors.As(err, &oe) {
		typ, code, msg := oe.Type, oe.Code, oe.Message
		var h http.Header
		if oe.Response != nil {
			h = oe.Response.Header
			if msg == "" && oe.Response.Body != nil {
				// Not an OpenAI error body: HTML from a proxy,
				// FastAPI's {"detail": ...}, Ollama's {"error": "..."}.
				typ, code, msg = errorBody(readLimited(oe.Response.Body))
			}
		}
		return m.apiFailure(oe.StatusCode, typ, code, msg, h)
	}
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		typ, code, msg := errorBody(se.Event.Data)
		return m.apiFailure(0, typ, code, msg, nil)
	}
	if raw != nil && raw.StatusCode >= 400 {
		// An error body the SDK could not decode (HTML from a proxy,
		// FastAPI's {"detail": ...}).
		var body []byte
		if raw.Body != nil {
			body = readLimited(raw.Body)
		}
		typ, code, msg := errorBody(body)
		return m.apiFailure(raw.StatusCode, typ, code, msg, raw.Header)
	}
	var syntax *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &syntax) || errors.As(err, &typeErr) {
		return failure{err: fmt.Errorf("openai: %w: chunk is not JSON: %w", llm.ErrBadResponse, err)}
	}
	if raw != nil {
		// The body broke off: a cut stream, worth retrying as long as
		// nothing of it reached the caller (attempt checks).
		return failure{err: fmt.Errorf("openai: %w: stream cut: %w", llm.ErrBadResponse, err), retry: true}
	}
	var uerr *url.Error
	return failure{err: fmt.Errorf("openai: %w", err), retry: errors.As(err, &uerr) || errors.Is(err, io.ErrUnexpectedEOF)}
}

// apiFailure builds the *llm.APIError of a server-reported error.
func (m *Model) apiFailure(status int, typ, code, msg string, h http.Header) failure {
	e := &llm.APIError{Provider: "openai", Status: status, Type: typ, Message: msg}
	if code != "" {
		e.Type = code // more precise: rate_limit_exceeded vs insufficient_quota
	}
	if e.Message == "" {
		e.Message = http.StatusText(status)
	}
	if e.Message == "" {
		e.Message = "error without a message"
	}
	f := failure{err: e}
	if h != nil {
		e.RequestID = h.Get("x-request-id")
		f.after, f.hasAfter = retryAfter(h, m.now())
		e.RetryAfter = f.after
	}
	switch {
	case h != nil && h.Get("x-should-retry") == "true":
		f.retry = true
	case h != nil && h.Get("x-should-retry") == "false":
	case e.Type == "insufficient_quota":
		// A 429 that waiting does not cure.
	default:
		f.retry = e.Retryable() || e.Type == "server_error"
	}
	return f
}

// readLimited reads the start of an error body.
func readLimited(r io.Reader) []byte {
	b, _ := io.ReadAll(io.LimitReader(r, 64<<10))
	return b
}

// errorBody extracts the type, code and message of an error body in the
// shapes OpenAI and compatible servers use, else the body's start.
func errorBody(b []byte) (typ, code, msg string) {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(b, &v) == nil {
		var obj struct {
			Type    string          `json:"type"`
			Code    json.RawMessage `json:"code"`
			Message string          `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(v.Error, &obj) == nil && obj.Message != "":
			var c string
			if json.Unmarshal(obj.Code, &c) != nil {
				c = strings.Trim(string(obj.Code), `"`) // numeric codes
				if c == "null" {
					c = ""
				}
			}
			return obj.Type, c, obj.Message
		case json.Unmarshal(v.Error, &s) == nil && s != "":
			return "", "", s
		case v.Message != "":
			return "", "", v.Message
		case json.Unmarshal(v.Detail, &s) == nil && s != "":
			return "", "", s
		case len(v.Detail) > 0:
			return "", "", string(v.Detail)
		}
	}
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return "", "", s
}

// retryAfter reads the retry-after-ms and retry-after (seconds or HTTP
// date) headers.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if v := h.Get("retry-after-ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && ms < 1e12 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	if v := h.Get("retry-after"); v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 && s < 1e9 {
			return time.Duration(s * float64(time.Second)), true
		}
		if t, err := http.ParseTime(v); err == nil {
			return max(t.Sub(now), 0), true
		}
	}
	return 0, false
}

// backoff returns the wait before retry number n (0-based), and false when
// the server asks for a longer wait than MaxRetryDelay.
func (m *Model) backoff(n int, f failure) (time.Duration, bool) {
	if f.hasAfter {
		return f.after, f.after <= m.maxRetryDelay
	}
	d := m.retryDelay
	for i := 0; i < n && d < m.maxRetryDelay; i++ {
		d *= 2
	}
	d = min(d, m.maxRetryDelay)
	if j := int64(d / 4); j > 0 {
		d -= time.Duration(rand.Int64N(j))
	}
	return d, true
}

// sleep waits d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("openai: %w", context.Cause(ctx))
	}
}
