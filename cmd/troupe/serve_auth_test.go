package main

import (
	"context"
	"strings"
	"testing"
)

// troupe serve beyond loopback (clients or a cluster's routes) without a
// token is refused, naming the variable to set; nothing is served.
func TestServeRefusesBeyondLoopbackWithoutToken(t *testing.T) {
	for _, args := range [][]string{
		{"--addr", "0.0.0.0:0"},
		{"--addr", ":0"},
		{"--addr", "127.0.0.1:0", "--cluster", "0.0.0.0:0", "--server-name", "a"},
	} {
		h := &harness{t: t, home: t.TempDir(), env: map[string]string{}}
		err := h.fail(append([]string{"serve", "--data", t.TempDir()}, args...)...)
		if !isUsage(err) || !strings.Contains(err.Error(), "TROUPE_NATS_TOKEN") || !strings.Contains(err.Error(), "beyond this machine") {
			t.Errorf("serve %v = %v; want a usage error asking for $TROUPE_NATS_TOKEN", args, err)
		}
	}
}

// On loopback without a token troupe serve runs, and says loudly on
// stderr that every local user can reach the teams; with a token it does
// not.
func TestServeWarnsOnLoopbackWithoutToken(t *testing.T) {
	for _, token := range []string{"", "a-token-for-the-test"} {
		h := &harness{t: t, home: t.TempDir(), env: map[string]string{"TROUPE_NATS_TOKEN": token}}
		out := newSyncBuffer()
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		m := h.main(strings.NewReader(""), out, out)
		go func() {
			done <- m.Run(ctx, []string{"--home", h.home, "serve", "--addr", "127.0.0.1:0", "--data", t.TempDir()})
		}()
		text := out.waitFor(t, "the server's URL", func(s string) bool { return strings.Contains(s, "Use it with") })
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("serve: %v\n%s", err, text)
		}
		warned := strings.Contains(text, "WITHOUT A TOKEN") && strings.Contains(text, "every user and process on this machine")
		if warned != (token == "") {
			t.Errorf("token %q: warned %v; want a warning only without a token:\n%s", token, warned, text)
		}
	}
}
