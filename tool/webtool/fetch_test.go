package webtool

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/llm/anthropic"
	"github.com/troupe-dev/troupe/llm/llmtest"
	"github.com/troupe-dev/troupe/tool"
)

// fakeDNS resolves the names of a test; anything else is not found.
type fakeDNS map[string]string

func (d fakeDNS) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := d[strings.ToLower(host)]; ok {
		return []netip.Addr{netip.MustParseAddr(a)}, nil
	}
	return nil, fmt.Errorf("lookup %s: no such host", host)
}

// names returns an Allows func naming hosts.
func names(hosts ...string) func(string) bool {
	return func(h string) bool {
		for _, x := range hosts {
			if strings.EqualFold(x, h) {
				return true
			}
		}
		return false
	}
}

// fakeModel returns a model on the fake Anthropic server answering every
// request with answer.
func fakeModel(t *testing.T, answer string) (llm.Model, *llmtest.AnthropicServer) {
	t.Helper()
	srv := llmtest.NewAnthropicServer(t, func(*llmtest.AnthropicRequest) llmtest.AnthropicReply { return llmtest.AnthropicText(answer) })
	m, err := anthropic.New(anthropic.Options{APIKey: "k", BaseURL: srv.URL, Model: "claude-haiku-4-5"})
	if err != nil {
		t.Fatal(err)
	}
	return m, srv
}

// hostURL is srv's URL with its host replaced by host (resolved by a
// fakeDNS to srv's address).
func hostURL(srv *httptest.Server, host, path string) string {
	u, _ := url.Parse(srv.URL)
	return "http://" + host + ":" + u.Port() + path
}

func call(t *testing.T, f *Fetch, rawURL, prompt string) tool.Result {
	t.Helper()
	in, _ := json.Marshal(map[string]string{"url": rawURL, "prompt": prompt})
	res, err := f.Run(t.Context(), tool.Call{ID: "c1", Name: "WebFetch", Input: in})
	if err != nil {
		t.Fatalf("Run(%s): %v", rawURL, err)
	}
	return res
}

// TestFetchAnswersOnce: the page becomes Markdown, the model is asked
// once with the page and the prompt, and only its answer is the result;
// a second call within the cache's time makes no second request.
func TestFetchAnswersOnce(t *testing.T) {
	var hits atomic.Int32
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<html><head><title>T</title><script>var secret=1</script></head><body><h1>Release notes</h1><p>Version <b>1.2</b> adds <a href="/x">caching</a>.</p></body></html>`)
	}))
	defer site.Close()
	model, srv := fakeModel(t, "It adds caching.")
	now := time.Unix(1000, 0)
	f := NewFetch(FetchConfig{Model: model, ModelName: "claude-haiku-4-5", Allows: names("127.0.0.1"), Now: func() time.Time { return now }})
	res := call(t, f, site.URL+"/notes", "What does 1.2 add?")
	if res.IsError || res.Content != "It adds caching." {
		t.Fatalf("result = %+v; want only the model's answer", res)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests; want 1", len(reqs))
	}
	sent := textOfMsg(reqs[0].LastMessage())
	for _, want := range []string{"# Release notes", "Version **1.2** adds [caching](" + site.URL + "/x).", "What does 1.2 add?"} {
		if !strings.Contains(sent, want) {
			t.Errorf("model request lacks %q:\n%s", want, sent)
		}
	}
	if strings.Contains(sent, "secret") {
		t.Errorf("the page's script reached the model:\n%s", sent)
	}
	if len(reqs[0].Tools) != 0 || reqs[0].Model != "claude-haiku-4-5" {
		t.Errorf("model request: tools %v model %q; want no tools on claude-haiku-4-5", reqs[0].Tools, reqs[0].Model)
	}

	call(t, f, site.URL+"/notes", "Anything else?")
	if n := hits.Load(); n != 1 {
		t.Errorf("%d page requests after a cached second call; want 1", n)
	}
	if n := srv.RequestCount(); n != 2 {
		t.Errorf("%d model requests; want 2 (one per call)", n)
	}
	now = now.Add(DefaultCacheTTL)
	call(t, f, site.URL+"/notes", "Again?")
	if n := hits.Load(); n != 2 {
		t.Errorf("%d page requests after the cache expired; want 2", n)
	}
}

// textOf is the text of a request message (test helper).
func textOfMsg(m llmtest.AnthropicMessage) string {
	var b strings.Builder
	for _, c := range m.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

func mustURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}

func toolCall(input string) tool.Call {
	return tool.Call{ID: "c1", Name: "WebFetch", Input: json.RawMessage(input)}
}

func utfValid(s string) bool { return strings.ToValidUTF8(s, "") == s }
