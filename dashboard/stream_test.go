package dashboard_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/dashboard"
	"github.com/troupe-dev/troupe/mailbox"
)

// A carriage return in what a writer put in the store (here a request id)
// never starts a field of its own in the event stream, however the client
// splits lines ("\r\n", "\n" or a lone "\r", as browsers do).
func TestEventStreamLineBreaks(t *testing.T) {
	f := newFixture(t, dashboard.Config{})
	text, _ := mailbox.Encode(mailbox.PermissionRequest{RequestID: "x\revent: problem\rretry: 1\rdata: pwned", AgentID: "alice",
		ToolName: "Bash", ToolUseID: "tu", Input: json.RawMessage(`{"command":"ls"}`), PermissionSuggestions: []json.RawMessage{}})
	f.send(t, "alice", "team-lead", text)
	f.send(t, "alice", "team-lead", "words\rwith\r\nbreaks")
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", f.srv.URL+"/team/alpha/events", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var event []byte
	r := bufio.NewReader(res.Body)
	for !bytes.HasSuffix(event, []byte("\n\n")) {
		b, err := r.ReadByte()
		if err != nil {
			t.Fatalf("read the first event: %v (%q so far)", err, event)
		}
		event = append(event, b)
	}
	lines := regexp.MustCompile(`\r\n|\r|\n`).Split(strings.TrimSuffix(string(event), "\n\n"), -1)
	for i, line := range lines {
		want := "data: "
		if i == 0 {
			want = "event: state"
		}
		if !strings.HasPrefix(line, want) {
			t.Errorf("line %d of the first event is %q; want it to start with %q", i, line, want)
		}
	}
}

// stuckWriter is a client that stopped reading: a write waits until the
// write deadline passes, and fails then (it waits forever without one).
type stuckWriter struct {
	header   http.Header
	mu       sync.Mutex
	deadline time.Time
}

func (w *stuckWriter) Header() http.Header { return w.header }
func (w *stuckWriter) WriteHeader(int)     {}
func (w *stuckWriter) FlushError() error   { return nil }

func (w *stuckWriter) SetWriteDeadline(t time.Time) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.deadline = t
	return nil
}

func (w *stuckWriter) Write(p []byte) (int, error) {
	for {
		w.mu.Lock()
		d := w.deadline
		w.mu.Unlock()
		if !d.IsZero() && time.Now().After(d) {
			return 0, os.ErrDeadlineExceeded
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// An event stream whose client stopped reading ends once a write has
// waited WriteTimeout, letting go of its watches, instead of holding them
// as long as the connection stays open.
func TestEventStreamLetsGoOfStuckClient(t *testing.T) {
	f := newFixture(t, dashboard.Config{})
	srv, err := dashboard.New(dashboard.Config{Teams: f.dash.Teams(), Mail: f.dash.Mail(), Tasks: f.dash.Tasks(),
		Heartbeat: 20 * time.Millisecond, WriteTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest("GET", "http://127.0.0.1/team/alpha/events", nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.ServeHTTP(&stuckWriter{header: http.Header{}}, req)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the event stream of a client that stopped reading still runs after 10 s (write timeout 50 ms)")
	}
}
