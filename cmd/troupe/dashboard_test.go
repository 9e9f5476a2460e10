package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/cli"
)

// TestDashboardCommand runs troupe dashboard on a random loopback port:
// it refuses a non-loopback address without a token and a short token,
// prints its address with the access token it made, refuses a request
// without it, serves the team, streams a message sent with troupe inbox
// send, and ends cleanly when its context does.
func TestDashboardCommand(t *testing.T) {
	h := &harness{t: t, home: t.TempDir(), openStore: cli.OpenFileStore, env: map[string]string{}}
	h.ok("team", "create", "alpha")
	h.ok("team", "add", "alpha", "alice")

	err := h.fail("dashboard", "--addr", "0.0.0.0:7420")
	var ue *UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "--token") {
		t.Fatalf("dashboard on 0.0.0.0 without a token: %v; want a usage error naming --token", err)
	}

	err = h.fail("dashboard", "--token", "short")
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "at least 16") {
		t.Fatalf("dashboard with a 5-character token: %v; want a usage error asking for 16", err)
	}

	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		m := h.main(strings.NewReader(""), pw, io.Discard)
		done <- m.Run(ctx, []string{"--home", h.home, "dashboard", "--addr", "127.0.0.1:0"})
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("read the dashboard's address: %v", err)
	}
	go io.Copy(io.Discard, pr)
	base, token := dashboardAddress(t, line)
	if len(token) < 16 {
		t.Fatalf("dashboard printed %q; want an address with a token it made", line)
	}
	if res, err := http.Get(base + "/team/alpha"); err != nil || res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a request without the token: %v, %v; want 401", res.Status, err)
	}

	sctx, scancel := context.WithTimeout(ctx, 10*time.Second)
	defer scancel()
	req, _ := http.NewRequestWithContext(sctx, "GET", base+"/team/alpha/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	waitFor := func(want string) {
		for sc.Scan() {
			if strings.Contains(sc.Text(), want) {
				return
			}
		}
		t.Fatalf("event stream ended before %q: %v", want, sc.Err())
	}
	waitFor(`data-name="alice"`)
	h.ok("inbox", "send", "--team", "alpha", "--to", "alice", "--from", "team-lead", "from the command line")
	waitFor("from the command line")

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("dashboard ended with %v; want nil after its context ended", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("dashboard did not end within 10 s of its context")
	}
}

// dashboardAddress returns the base address and the token of the line
// troupe dashboard prints ("... at http://HOST:PORT/?token=TOKEN").
func dashboardAddress(t *testing.T, line string) (base, token string) {
	t.Helper()
	i := strings.Index(line, "http://")
	if i < 0 {
		t.Fatalf("dashboard printed %q; want its address", line)
	}
	u, err := url.Parse(strings.TrimSpace(line[i:]))
	if err != nil {
		t.Fatalf("dashboard printed %q: %v", line, err)
	}
	return "http://" + u.Host, u.Query().Get("token")
}
