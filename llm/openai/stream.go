package openai

import (
	"context"
	"fmt"
	"iter"
	"mime"
	"net/http"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/troupe-dev/troupe/llm"
)

// Stream sends req as a streaming Chat Completions call and yields its
// events, ending with EventDone or an error: an *llm.APIError for errors
// the server reported, an error wrapping llm.ErrBadResponse for a malformed
// or cut stream, or one wrapping context.Cause(ctx) once ctx ends.
//
// Failures that may pass (see the package comment) are retried, each after
// an EventRetry whose Err says why, as long as no other event has been
// yielded.
func (m *Model) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		params, err := m.params(req)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		for n := 0; ; n++ {
			f, finished := m.attempt(ctx, params, yield)
			if finished {
				return
			}
			if !f.retry || n >= m.maxRetries {
				yield(llm.Event{}, f.err)
				return
			}
			delay, ok := m.backoff(n, f)
			if !ok {
				yield(llm.Event{}, f.err)
				return
			}
			m.log.Warn("openai: retrying", "model", params.Model, "retry", n+1, "of", m.maxRetries, "delay", delay, "err", f.err)
			if !yield(llm.Event{Type: llm.EventRetry, Err: &llm.RetryError{Provider: "openai", Attempt: n + 1, Max: m.maxRetries + 1, Delay: delay, Err: f.err}}, nil) {
				return
			}
			if err := sleep(ctx, delay); err != nil {
				yield(llm.Event{}, err)
				return
			}
		}
	}
}

// attempt makes one call. It reports finished when the stream completed
// (EventDone was yielded) or the consumer stopped; otherwise f says what
// failed. A failure is retryable only while nothing was yielded.
func (m *Model) attempt(ctx context.Context, params openai.ChatCompletionNewParams, yield func(llm.Event, error) bool) (f failure, finished bool) {
	var raw *http.Response
	stream := m.svc.NewStreaming(ctx, params, option.WithResponseInto(&raw))
	defer stream.Close()
	acc := newAccumulator()
	yielded := false
	for stream.Next() {
		for _, ev := range acc.add(stream.Current()) {
			yielded = true
			if !yield(ev, nil) {
				return failure{}, true
			}
		}
	}
	if err := stream.Err(); err != nil {
		f := m.classify(ctx, err, raw)
		f.retry = f.retry && !yielded
		return f, false
	}
	evs, resp, err := acc.done(params.Model)
	if err != nil {
		if ctx.Err() != nil {
			return failure{err: fmt.Errorf("openai: %w", context.Cause(ctx))}, false
		}
		if acc.chunks == 0 && raw != nil {
			if mt, _, _ := mime.ParseMediaType(raw.Header.Get("Content-Type")); mt != "text/event-stream" {
				err = fmt.Errorf("%w (content type %q, not an event stream)", err, raw.Header.Get("Content-Type"))
			}
		}
		return failure{err: fmt.Errorf("openai: %w", err)}, false
	}
	for _, ev := range evs {
		if !yield(ev, nil) {
			return failure{}, true
		}
	}
	yield(llm.Event{Type: llm.EventDone, Response: resp}, nil)
	return failure{}, true
}
