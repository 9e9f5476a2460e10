package endpoint

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/llm"
)

// Explain words what a user can act on, and keeps the error it explains.
func TestEndpointExplain(t *testing.T) {
	ep, ok := Of("anthropic", func(k string) string {
		if k == "ANTHROPIC_BASE_URL" {
			return "http://127.0.0.1:1"
		}
		return ""
	})
	if !ok || ep.URL != "http://127.0.0.1:1" {
		t.Fatalf("EndpointOf = %+v, %v", ep, ok)
	}
	if _, ok := Of("scripted", func(string) string { return "" }); ok {
		t.Error("the scripted provider has an endpoint")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, refused := net.Dial("tcp", addr)
	for _, c := range []struct {
		err  error
		want string
	}{
		{&llm.APIError{Status: 401}, "refused the API key: check ANTHROPIC_API_KEY"},
		{&llm.APIError{Status: 404}, "does not know this model or path: check --model and ANTHROPIC_BASE_URL"},
		{&llm.APIError{Status: 529, Type: "overloaded_error"}, "is failing or overloaded"},
		{refused, "nothing listens there (is the server running? is ANTHROPIC_BASE_URL right?)"},
		{fmt.Errorf("decode: %w", llm.ErrBadResponse), "not a valid response"},
		{context.DeadlineExceeded, "did not answer in time"},
	} {
		got := ep.Explain(c.err)
		if got == nil || !strings.Contains(got.Error(), c.want) || !strings.Contains(got.Error(), "the Anthropic API at http://127.0.0.1:1") {
			t.Errorf("Explain(%v) = %v; want %q about the Anthropic API", c.err, got, c.want)
		}
		if !errors.Is(got, c.err) {
			t.Errorf("Explain(%v) lost the error it explains", c.err)
		}
	}
	if got := ep.Explain(context.Canceled); got != context.Canceled {
		t.Errorf("Explain(Canceled) = %v; want it unchanged", got)
	}
	plain := errors.New("something else")
	if got := ep.Explain(plain); got != plain {
		t.Errorf("Explain of an error it cannot explain = %v; want it unchanged", got)
	}
	line := ep.RetryLine(&llm.RetryError{Err: &llm.APIError{Status: 429}, Attempt: 1, Max: 5})
	if !strings.Contains(line, "is rate limiting this key; retry 1 of 4") {
		t.Errorf("RetryLine = %q", line)
	}
}
