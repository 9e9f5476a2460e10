package webtool

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestFetchRedirects: same-host redirects are followed up to the cap; a
// redirect to another host comes back to the model with the new URL.
func TestFetchRedirects(t *testing.T) {
	var site *httptest.Server
	site = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/old":
			http.Redirect(w, r, "/new", http.StatusMovedPermanently)
		case r.URL.Path == "/new":
			fmt.Fprint(w, "moved content")
		case r.URL.Path == "/away":
			http.Redirect(w, r, hostURL(site, "b.test", "/there"), http.StatusFound)
		case strings.HasPrefix(r.URL.Path, "/hop/"):
			n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/hop/"))
			if n == 0 {
				fmt.Fprint(w, "end of chain")
				return
			}
			http.Redirect(w, r, fmt.Sprintf("/hop/%d", n-1), http.StatusFound)
		case r.URL.Path == "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	defer site.Close()
	model, srv := fakeModel(t, "answer")
	dns := fakeDNS{"a.test": "127.0.0.1", "b.test": "127.0.0.1", "www.a.test": "127.0.0.1"}
	f := NewFetch(FetchConfig{Model: model, Resolver: dns, Allows: names("a.test", "b.test", "www.a.test")})

	if res := call(t, f, hostURL(site, "a.test", "/old"), "p"); res.IsError || res.Content != "answer" {
		t.Errorf("same-host redirect: %+v; want it followed", res)
	}
	if got := textOfMsg(srv.LastRequest().LastMessage()); !strings.Contains(got, "moved content") {
		t.Errorf("model saw %q; want the redirect target's content", got)
	}
	before := srv.RequestCount()
	res := call(t, f, hostURL(site, "a.test", "/away"), "what is there?")
	want := hostURL(site, "b.test", "/there")
	if res.IsError || !strings.Contains(res.Content, "REDIRECT DETECTED") || !strings.Contains(res.Content, "url: \""+want+"\"") ||
		!strings.Contains(res.Content, `prompt: "what is there?"`) {
		t.Errorf("cross-host redirect: %+v; want a note to fetch %s", res, want)
	}
	if srv.RequestCount() != before {
		t.Errorf("the model was asked about a cross-host redirect")
	}
	if res := call(t, f, hostURL(site, "a.test", "/hop/10"), "p"); res.IsError {
		t.Errorf("10 redirects: %+v; want followed", res)
	}
	for _, path := range []string{"/hop/11", "/loop"} {
		res := call(t, f, hostURL(site, "a.test", path), "p")
		if !res.IsError || !strings.Contains(res.Content, "redirected more than 10 times") {
			t.Errorf("%s: %+v; want stopped after 10 redirects", path, res)
		}
	}
	if res := call(t, f, hostURL(site, "a.test", "/missing"), "p"); !res.IsError || !strings.Contains(res.Content, "404") {
		t.Errorf("404: %+v", res)
	}
}

func TestSameHost(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"https://a.test/x", "https://a.test/y", true},
		{"https://a.test/x", "https://A.TEST:8443/y", true},
		{"https://a.test/x", "https://www.a.test/y", true},
		{"http://a.test/x", "https://a.test/y", true},
		{"https://a.test/x", "http://a.test/y", false},
		{"https://a.test/x", "https://b.test/y", false},
		{"https://a.test/x", "https://evil.a.test/y", false},
	}
	for _, tt := range tests {
		if got := sameHost(mustURL(tt.a), mustURL(tt.b)); got != tt.want {
			t.Errorf("sameHost(%s, %s) = %v; want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

// TestFetchCaps: a body over the size cap and a server slower than the
// time cap are refused with errors that say so.
func TestFetchCaps(t *testing.T) {
	release := make(chan struct{})
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big": // chunked: no Content-Length to refuse early
			for range 4 {
				w.Write([]byte(strings.Repeat("x", 500)))
				w.(http.Flusher).Flush()
			}
		case "/declared":
			w.Header().Set("Content-Length", "5000")
			w.Write([]byte(strings.Repeat("x", 5000)))
		case "/fits":
			w.Write([]byte(strings.Repeat("y", 1000)))
		case "/slow":
			select {
			case <-release:
			case <-r.Context().Done():
			}
		case "/bin":
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte("\x89PNG\r\n"))
		}
	}))
	defer site.Close()
	defer close(release)
	model, _ := fakeModel(t, "ok")
	f := NewFetch(FetchConfig{Model: model, Allows: names("127.0.0.1"), MaxBytes: 1000, Timeout: 200 * time.Millisecond})
	tests := []struct{ path, want string }{
		{"/big", "larger than the 1000-byte cap"},
		{"/declared", "is 5000 bytes, more than the 1000-byte cap"},
		{"/slow", "did not answer within 200ms"},
		{"/bin", "the content is image/png, not text or HTML"},
	}
	for _, tt := range tests {
		if res := call(t, f, site.URL+tt.path, "p"); !res.IsError || !strings.Contains(res.Content, tt.want) {
			t.Errorf("%s: %+v; want an error with %q", tt.path, res, tt.want)
		}
	}
	if res := call(t, f, site.URL+"/fits", "p"); res.IsError {
		t.Errorf("/fits (exactly the cap): %+v", res)
	}
}

func TestFetchInputErrors(t *testing.T) {
	model, srv := fakeModel(t, "ok")
	f := NewFetch(FetchConfig{Model: model})
	tests := []struct{ input, want string }{
		{`{"url":"","prompt":"p"}`, "url is empty"},
		{`{"url":"ftp://x.test/f","prompt":"p"}`, `scheme must be http or https, not "ftp"`},
		{`{"url":"example.com/page","prompt":"p"}`, "scheme must be http or https"},
		{`{"url":"https:///path","prompt":"p"}`, "has no host"},
		{`{"url":"https://u:pw@x.test/","prompt":"p"}`, "user name or password"},
		{`{"url":"https://x.test/","prompt":"  "}`, "prompt is empty"},
		{`{"url":"https://x.test/","prompt":"p","extra":1}`, `unknown field "extra"`},
		{`{"url":7,"prompt":"p"}`, `field "url" must be string`},
		{`{"url":"https://x.test/` + strings.Repeat("a", 2000) + `","prompt":"p"}`, "at most 2000"},
	}
	for _, tt := range tests {
		res, err := f.Run(t.Context(), toolCall(tt.input))
		if err != nil || !res.IsError || !strings.Contains(res.Content, tt.want) {
			t.Errorf("Run(%.60s) = %+v, %v; want an error with %q", tt.input, res, err, tt.want)
		}
	}
	if srv.RequestCount() != 0 {
		t.Errorf("the model was asked about invalid input")
	}
}
