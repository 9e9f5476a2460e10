package swarm

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/permission/approve"
	"github.com/troupe-dev/troupe/team"
)

// An in-process teammate's question is mirrored in the lead's inbox: a
// verdict mailed by another front end (the dashboard, with Verdict) wins
// over the lead's queue, which is withdrawn; and an answer from the queue
// is mailed back, so the mirror shows as answered. The lead never answers
// the mirror itself.
func TestAskMirrored(t *testing.T) {
	var mu sync.Mutex
	asked, withdrawn := 0, 0
	answer := make(chan PermissionAnswer) // the person at the lead's queue
	h := newHarness(t, script(`{"match":{},"reply":{"text":"ok"},"repeat":true}`), func(c *LeadConfig) {
		c.Answer = func(ctx context.Context, a PermissionAsk) (PermissionAnswer, error) {
			mu.Lock()
			asked++
			mu.Unlock()
			select {
			case ans := <-answer:
				return ans, nil
			case <-ctx.Done():
				mu.Lock()
				withdrawn++
				mu.Unlock()
				return PermissionAnswer{}, ctx.Err()
			}
		}
	})
	h.create("mirror")
	info := h.spawn("frank", "stand by")
	h.waitFor("frank runs", func() bool { h.mu.Lock(); defer h.mu.Unlock(); return h.mates["frank"] != nil })
	h.mu.Lock()
	tm := h.mates["frank"]
	h.mu.Unlock()
	inProcess := func(ctx context.Context, req approve.AskRequest) (approve.Answer, error) {
		return h.lead.AskInProcess(ctx, "frank", info.Color, req)
	}
	ask := func(cmd string) <-chan approve.Answer {
		out := make(chan approve.Answer, 1)
		go func() {
			ans, err := tm.AskMirrored(context.Background(), approve.AskRequest{Tool: "Bash", ToolUseID: "toolu_" + cmd, Input: []byte(`{"command":"` + cmd + `"}`), Reason: "runs " + cmd}, inProcess)
			if err != nil {
				t.Error(err)
			}
			out <- ans
		}()
		return out
	}
	// The mirror, as the dashboard reads it from the lead's inbox.
	mirror := func(cmd string) (mailbox.Message, mailbox.PermissionRequest) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			msgs, err := h.store.Mail().Read(context.Background(), "mirror", team.LeadName, false)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range msgs {
				if f, err := mailbox.Decode(m.Text); err == nil {
					if r, ok := f.(mailbox.PermissionRequest); ok && strings.Contains(string(r.Input), cmd) {
						return m, r
					}
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("no mirrored request for %s in the lead's inbox", cmd)
		return mailbox.Message{}, mailbox.PermissionRequest{}
	}

	// 1. The dashboard answers first.
	got := ask("make deploy")
	m, f := mirror("make deploy")
	if m.From != "frank" || f.AgentID != "frank" || f.ToolName != "Bash" {
		t.Errorf("mirror = %+v %+v", m, f)
	}
	resp, err := Verdict(f, true, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	text, _ := mailbox.Encode(resp)
	if _, err := h.store.Mail().Send(context.Background(), "mirror", "frank", mailbox.Message{From: team.LeadName, Text: text}); err != nil {
		t.Fatal(err)
	}
	if a := <-got; !a.Allow {
		t.Errorf("answered from the dashboard: %+v; want allowed", a)
	}
	h.waitFor("the lead's question withdrawn", func() bool { mu.Lock(); defer mu.Unlock(); return withdrawn == 1 })

	// 2. The lead's queue answers first: the verdict is mailed back.
	got = ask("git push")
	_, f = mirror("git push")
	answer <- PermissionAnswer{Allow: false, Message: "not today"}
	if a := <-got; a.Allow || a.Message != "not today" {
		t.Errorf("answered in process: %+v; want denied with the feedback", a)
	}
	h.waitFor("the mirror answered by mail", func() bool {
		msgs, _ := h.store.Mail().Read(context.Background(), "mirror", "frank", false)
		for _, m := range msgs {
			if d, err := mailbox.Decode(m.Text); err == nil {
				if r, ok := d.(mailbox.PermissionResponse); ok && r.RequestID == f.RequestID && r.Subtype == "error" {
					return true
				}
			}
		}
		return false
	})
	mu.Lock()
	if asked != 2 {
		t.Errorf("the lead's queue was asked %d times; want 2 (never for a mirror)", asked)
	}
	mu.Unlock()
	// Frank's pump takes the verdict back: the request it settled in
	// process is forgotten then, and no warning may follow.
	h.waitFor("frank to take the mailed-back verdict", func() bool {
		tm.mu.Lock()
		defer tm.mu.Unlock()
		_, pending := tm.settled[f.RequestID]
		return !pending
	})
	if h.hasEvent("frank", EventWarning, "unknown request") {
		t.Error("the mailed-back verdict was reported as unknown")
	}
}
