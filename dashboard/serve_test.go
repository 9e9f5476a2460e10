package dashboard

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// TestServe serves a handler until ctx ends, then returns nil with the
// listener closed; a request in flight sees its context end with ctx.
func TestServe(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	streaming := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/stream" {
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			close(streaming)
			<-r.Context().Done() // as the live event stream does
			return
		}
		io.WriteString(w, "ok")
	})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, h) }()
	base := "http://" + ln.Addr().String()
	res, err := http.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(b) != "ok" {
		t.Errorf("GET / = %q; want ok", b)
	}
	stream, err := http.Get(base + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	<-streaming
	start := time.Now()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve after ctx ended = %v; want nil", err)
		}
	case <-time.After(ShutdownTimeout + 5*time.Second):
		t.Fatal("Serve did not return after ctx ended")
	}
	if d := time.Since(start); d > ShutdownTimeout/2 {
		t.Errorf("Serve took %v to shut down with a stream open; want it ended with ctx", d)
	}
	if _, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
		t.Error("the listener still accepts after Serve returned")
	}
}

// TestServeClosedListener: a listener that fails is an error.
func TestServeClosedListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	if err := Serve(t.Context(), ln, http.NotFoundHandler()); err == nil {
		t.Error("Serve on a closed listener = nil; want an error")
	}
}
