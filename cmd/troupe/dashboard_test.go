package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/cli"
)

// TestDashboardCommand runs troupe dashboard on a random loopback port:
// it refuses a non-loopback address without a token, prints its address,
// serves the team, streams a message sent with troupe inbox send, and
// ends cleanly when its context does.
func TestDashboardCommand(t *testing.T) {
	h := &harness{t: t, home: t.TempDir(), openStore: cli.OpenFileStore, env: map[string]string{}}
	h.ok("team", "create", "alpha")
	h.ok("team", "add", "alpha", "alice")

	err := h.fail("dashboard", "--addr", "0.0.0.0:7420")
	var ue *UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "--token") {
		t.Fatalf("dashboard on 0.0.0.0 without a token: %v; want a usage error naming --token", err)
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
	i := strings.Index(line, "http://")
	if i < 0 {
		t.Fatalf("dashboard printed %q; want its address", line)
	}
	base := strings.TrimSuffix(strings.TrimSpace(line[i:]), "/")

	sctx, scancel := context.WithTimeout(ctx, 10*time.Second)
	defer scancel()
	req, _ := http.NewRequestWithContext(sctx, "GET", base+"/team/alpha/events", nil)
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
