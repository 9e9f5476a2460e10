package peertool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/tool"
	"github.com/troupe-dev/troupe/tool/peertool"
)

func manyRows(n int) peertool.Source {
	return func(context.Context) ([]peertool.Row, error) {
		rows := make([]peertool.Row, n)
		for i := range rows {
			kind := []string{peertool.KindSubAgent, peertool.KindTeammate, peertool.KindSession, peertool.KindRemote}[i%4]
			rows[i] = peertool.Row{Name: fmt.Sprintf("agent-%03d", i%150), Ref: fmt.Sprintf("r%04d", i), Kind: kind, State: "idle", Folder: "/w"}
		}
		return rows, nil
	}
}

func run(t testing.TB, tl tool.Tool, input string) tool.Result {
	t.Helper()
	res, err := tl.Run(context.Background(), tool.Call{ID: "c", Name: tl.Spec().Name, Input: json.RawMessage(input)})
	if err != nil {
		t.Fatalf("Run(%s) error: %v", input, err)
	}
	return res
}

// Paging over 300 rows (names repeat) visits each row once, in order.
func TestListAgentsPaging(t *testing.T) {
	la := peertool.NewListAgents(peertool.Config{Sources: []peertool.Source{manyRows(300)}})
	seen := map[string]bool{}
	cursor, pages := "", 0
	var last string
	for {
		in := `{"limit":70}`
		if cursor != "" {
			in = fmt.Sprintf(`{"limit":70,"cursor":%q}`, cursor)
		}
		res := run(t, la, in)
		if res.IsError {
			t.Fatalf("page %d: %s", pages, res.Content)
		}
		pages++
		cursor = ""
		for _, line := range strings.Split(res.Content, "\n")[1:] {
			if c, ok := strings.CutPrefix(line, "next_cursor: "); ok {
				cursor = c
				continue
			}
			ref := strings.Fields(line)[1]
			if seen[ref] {
				t.Fatalf("row %s listed twice", ref)
			}
			seen[ref] = true
			last = line
		}
		if cursor == "" {
			break
		}
	}
	if len(seen) != 300 || pages != 5 {
		t.Fatalf("saw %d rows in %d pages; want 300 in 5", len(seen), pages)
	}
	if !strings.Contains(last, " remote ") {
		t.Errorf("last row %q; want a remote session (kinds in order)", last)
	}
	if res := run(t, la, `{"cursor":"not-a-cursor"}`); !res.IsError {
		t.Errorf("a forged cursor was accepted: %s", res.Content)
	}
	if res := run(t, la, `{"limit":1000}`); !res.IsError {
		t.Errorf("limit 1000 was accepted")
	}
}

func TestRoute(t *testing.T) {
	rows := []peertool.Row{
		{Name: "beta", Ref: "aaaa1111", Kind: peertool.KindSession, To: "session:aaaa1111-full"},
		{Name: "gamma", Ref: "bbbb", Kind: peertool.KindRemote, To: "session:bbbb-full"},
		{Name: "gamma", Ref: "gamma@t", Kind: peertool.KindTeammate, To: "gamma"},
		{Name: "scout", Ref: "a1b2c3d4e", Kind: peertool.KindSubAgent, To: "a1b2c3d4e"},
	}
	tests := []struct {
		to   string
		want peertool.Decision
	}{
		{"beta", peertool.Decision{Peer: "session:aaaa1111-full"}},
		{"beta [aaaa1111]", peertool.Decision{Peer: "session:aaaa1111-full"}},
		{"uds:/tmp/x.sock", peertool.Decision{Peer: "uds:/tmp/x.sock"}},
		{"bridge:abc", peertool.Decision{Peer: "bridge:abc"}},
		{"gamma [bbbb]", peertool.Decision{Peer: "session:bbbb-full"}},
		{"gamma [gamma@t]", peertool.Decision{To: "gamma"}},
		{"scout", peertool.Decision{To: "a1b2c3d4e"}},
		{"team-lead", peertool.Decision{To: "team-lead"}},
		{"a1b2c3d4e", peertool.Decision{To: "a1b2c3d4e"}},
	}
	for _, tt := range tests {
		if got := peertool.Route(tt.to, rows); got != tt.want {
			t.Errorf("Route(%q) = %+v; want %+v", tt.to, got, tt.want)
		}
	}
	for _, to := range []string{"gamma", "beta [zzzz]"} {
		if got := peertool.Route(to, rows); got.Err == "" {
			t.Errorf("Route(%q) = %+v; want a refusal", to, got)
		}
	}
}

type fakeInner struct {
	mu    sync.Mutex
	calls []string
}

func (f *fakeInner) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "SendMessage", Description: "inner."}
}
func (f *fakeInner) ReadOnly(json.RawMessage) bool { return false }
func (f *fakeInner) Run(_ context.Context, c tool.Call) (tool.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, string(c.Input))
	return tool.Result{Content: "inner"}, nil
}

type fakePeers struct{ sent []string }

func (p *fakePeers) SendPeer(_ context.Context, addr, text, _ string) (string, error) {
	p.sent = append(p.sent, addr+" "+text)
	return "sent to " + addr, nil
}

func TestWrapRoutes(t *testing.T) {
	inner, peers := &fakeInner{}, &fakePeers{}
	src := func(context.Context) ([]peertool.Row, error) {
		return []peertool.Row{{Name: "beta", Ref: "aaaa", Kind: peertool.KindSession, To: "session:aaaa-full"},
			{Name: "scout", Ref: "a123", Kind: peertool.KindSubAgent, To: "a123"}}, nil
	}
	sm := peertool.Wrap(inner, peertool.Config{Sources: []peertool.Source{src}, Peers: peers})
	if !strings.Contains(sm.Spec().Description, "uds:") {
		t.Errorf("description does not name the peer addresses")
	}
	if res := run(t, sm, `{"to":"beta","message":"hello"}`); res.IsError || !strings.Contains(res.Content, "session:aaaa-full") {
		t.Fatalf("to beta: %+v", res)
	}
	if res := run(t, sm, `{"to":"scout","message":"go on"}`); res.Content != "inner" {
		t.Fatalf("to scout: %+v", res)
	}
	if res := run(t, sm, `{"to":"*","message":"all"}`); res.Content != "inner" {
		t.Fatalf("to *: %+v", res)
	}
	if res := run(t, sm, `{"to":"uds:/x.sock","message":{"type":"shutdown_request"}}`); !res.IsError {
		t.Fatalf("a structured message to a session was sent: %+v", res)
	}
	if len(peers.sent) != 1 || peers.sent[0] != "session:aaaa-full hello" {
		t.Errorf("peers got %q", peers.sent)
	}
	if len(inner.calls) != 2 || !strings.Contains(inner.calls[0], `"to":"a123"`) {
		t.Errorf("inner got %q; want scout rewritten to its ref", inner.calls)
	}
}

// BenchmarkListAgents1000 lists and renders the first page of 1,000 rows
// and pages through all of them.
func BenchmarkListAgents1000(b *testing.B) {
	la := peertool.NewListAgents(peertool.Config{Sources: []peertool.Source{manyRows(1000)}})
	for b.Loop() {
		cursor := ""
		for {
			in := `{"limit":200}`
			if cursor != "" {
				in = fmt.Sprintf(`{"limit":200,"cursor":%q}`, cursor)
			}
			res := run(b, la, in)
			i := strings.LastIndex(res.Content, "next_cursor: ")
			if i < 0 {
				break
			}
			cursor = strings.TrimSpace(strings.SplitN(res.Content[i+len("next_cursor: "):], "\n", 2)[0])
		}
	}
}

// BenchmarkListAgentsPage1000 is one ListAgents call (a full page of 200)
// over 1,000 rows.
func BenchmarkListAgentsPage1000(b *testing.B) {
	la := peertool.NewListAgents(peertool.Config{Sources: []peertool.Source{manyRows(1000)}})
	for b.Loop() {
		run(b, la, `{"limit":200}`)
	}
}
