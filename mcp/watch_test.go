package mcp_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/mcp"
)

// TestWatchResource: a watch subscribes to a go-sdk server's subscribable
// resource; the server's notifications/resources/updated reach the watch
// (once per update taken), the resource reads its new text, and after
// stop updates no longer come. A resource of a server without
// subscriptions is refused by name.
func TestWatchResource(t *testing.T) {
	streamable, _ := httpServers(t)
	m := start(t, []mcp.Server{stdio(t, "local", "counter"), stdio(t, "plain", "ok"),
		{Name: "remote", Type: mcp.TypeHTTP, URL: streamable, Headers: map[string]string{"X-Test": "yes"}}}, mcp.Options{})
	if _, _, err := m.WatchResource(t.Context(), "plain", "test://hello"); !errors.Is(err, mcp.ErrNoSubscribe) {
		t.Errorf("watch on a server without subscriptions = %v, want ErrNoSubscribe", err)
	}
	if _, _, err := m.WatchResource(t.Context(), "remote", "test://hello"); !errors.Is(err, mcp.ErrNoSubscribe) {
		t.Errorf("watch on a streamable HTTP server = %v, want ErrNoSubscribe", err)
	}
	for _, srv := range []string{"local"} {
		t.Run(srv, func(t *testing.T) {
			updates, stop, err := m.WatchResource(t.Context(), srv, "test://counter")
			if err != nil {
				t.Fatal(err)
			}
			tools := m.Tools()
			for want := 1; want <= 2; want++ {
				if res := call(t, tools, "mcp__"+srv+"__bump", `{}`); res.IsError {
					t.Fatalf("bump: %s", res.Content)
				}
				select {
				case <-updates:
				case <-time.After(10 * time.Second):
					t.Fatalf("no update after bump %d", want)
				}
				text, err := m.ReadResourceText(t.Context(), srv, "test://counter")
				if err != nil || !strings.HasPrefix(text, "count ") {
					t.Fatalf("read = %q, %v", text, err)
				}
			}
			stop()
			call(t, tools, "mcp__"+srv+"__bump", `{}`)
			select {
			case <-updates:
				t.Fatal("an update after stop")
			case <-time.After(200 * time.Millisecond):
			}
		})
	}
	if _, _, err := m.WatchResource(context.Background(), "nosuch", "test://counter"); err == nil || !strings.Contains(err.Error(), `"nosuch"`) {
		t.Errorf("unknown server: %v", err)
	}
}
