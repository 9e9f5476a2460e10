package mcp_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/mcp"
	"github.com/troupe-dev/troupe/tool"
)

// TestServeHTTP serves a tool over streamable HTTP behind a bearer
// token: a client with the wrong token is refused, the right one calls
// the tool, and ending ctx shuts the server down without an error.
func TestServeHTTP(t *testing.T) {
	const token = "s3cret-s3cret-s3cret"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- mcp.Expose("t", "1", "", []tool.Tool{shotTool{}}).ServeHTTP(ctx, ln, token) }()
	url := "http://" + ln.Addr().String() + "/"
	m := mcp.Start(t.Context(), []mcp.Server{
		{Name: "bad", Type: mcp.TypeHTTP, URL: url, Headers: map[string]string{"Authorization": "Bearer " + token[:len(token)-1]}},
		{Name: "good", Type: mcp.TypeHTTP, URL: url, Headers: map[string]string{"Authorization": "Bearer " + token}},
	}, mcp.Options{StartTimeout: 10 * time.Second})
	st := m.Status()
	if st[0].State != mcp.StateFailed || !strings.Contains(st[0].Err.Error(), "Unauthorized") {
		t.Errorf("wrong token: %+v; want refused as Unauthorized", st[0])
	}
	if st[1].State != mcp.StateConnected || len(st[1].Tools) != 1 {
		t.Errorf("right token: %+v; want connected with the one tool", st[1])
	}
	m.Close()
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("ServeHTTP after ctx ended = %v; want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ServeHTTP did not return after ctx ended")
	}
	if _, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
		t.Error("the listener still accepts after ServeHTTP returned")
	}
}

// A token shorter than MinTokenLen is refused before anything is served.
func TestServeHTTPRefusesAShortToken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, token := range []string{"", "x", "fifteen-chars15"} {
		err := mcp.Expose("t", "1", "", []tool.Tool{shotTool{}}).ServeHTTP(t.Context(), ln, token)
		if err == nil || !strings.Contains(err.Error(), "at least 16") {
			t.Errorf("ServeHTTP with token %q = %v; want a refusal naming the 16 characters", token, err)
		}
	}
}
