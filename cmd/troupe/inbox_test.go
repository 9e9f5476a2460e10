package main

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/troupe-dev/troupe/cli/inboxcmd"
	"github.com/troupe-dev/troupe/mailbox"
)

func TestInboxSendRead(t *testing.T) {
	forEachStore(t, func(t *testing.T, h *harness) {
		h.roster()
		var s inboxcmd.Sent
		h.json(&s, "inbox", "send", "--team", "alpha", "--from", "team-lead", "--to", "alice", "--summary", "hi", "hello alice")
		if len(s.Deliveries) != 1 || s.Deliveries[0].To != "alice" || s.Deliveries[0].ID == "" {
			t.Errorf("send to alice = %+v; want one delivery to alice with an id", s)
		}
		out := h.ok("inbox", "send", "--team", "alpha", "--from", "alice", "--to", "*", "standup at ten")
		if want := "sent to bob, team-lead\n"; out != want {
			t.Errorf("broadcast from alice printed %q; want %q", out, want)
		}
		r := h.exec("line one\nline two\n", "inbox", "send", "--team", "alpha", "--from", "bob", "--to", "alice", "-")
		if r.err != nil {
			t.Fatalf("send from stdin: %v", r.err)
		}

		var msgs []mailbox.Message
		h.json(&msgs, "inbox", "read", "--team", "alpha", "--agent", "alice")
		var texts []string
		for _, m := range msgs {
			texts = append(texts, m.From+": "+m.Text)
		}
		if want := []string{"team-lead: hello alice", "bob: line one\nline two"}; !cmp.Equal(texts, want) {
			t.Errorf("alice's inbox = %q; want %q", texts, want)
		}
		if msgs[0].Summary != "hi" || msgs[0].ID != s.Deliveries[0].ID || msgs[1].Color != "green" {
			t.Errorf("alice's messages = %+v; want summary hi, the delivered id, bob's roster color", msgs)
		}

		out = h.ok("inbox", "read", "--team", "alpha", "--agent", "alice", "--mark-read")
		for _, want := range []string{"TIME", "team-lead", "hello alice", "unread", "line one", "line two"} {
			if !strings.Contains(out, want) {
				t.Errorf("inbox read output lacks %q:\n%s", want, out)
			}
		}
		h.json(&msgs, "inbox", "read", "--team", "alpha", "--agent", "alice", "--unread")
		if len(msgs) != 0 {
			t.Errorf("after --mark-read, --unread lists %d messages; want 0", len(msgs))
		}
		h.ok("inbox", "send", "--team", "alpha", "--from", "bob", "--to", "alice", "one more")
		h.json(&msgs, "inbox", "read", "--team", "alpha", "--agent", "alice", "--unread")
		if len(msgs) != 1 || msgs[0].Text != "one more" {
			t.Errorf("--unread = %+v; want only \"one more\"", msgs)
		}
		h.json(&msgs, "inbox", "read", "--team", "alpha", "--agent", "alice")
		if len(msgs) != 3 || !msgs[0].Read {
			t.Errorf("read without --unread = %d messages (first read %v); want 3, the first read", len(msgs), msgs[0].Read)
		}
	})
}

func TestInboxFrames(t *testing.T) {
	forEachStore(t, func(t *testing.T, h *harness) {
		h.roster()
		text, err := mailbox.Encode(mailbox.ShutdownRequest{RequestID: "shutdown-1@alice", From: "team-lead", Reason: "work is done"})
		if err != nil {
			t.Fatal(err)
		}
		h.ok("inbox", "send", "--team", "alpha", "--from", "team-lead", "--to", "alice", text)
		out := h.ok("inbox", "read", "--team", "alpha", "--agent", "alice")
		if want := `[shutdown_request] from=team-lead reason="work is done" request=shutdown-1@alice`; !strings.Contains(out, want) {
			t.Errorf("inbox read output:\n%s\nwant %s", out, want)
		}
		var msgs []mailbox.Message
		h.json(&msgs, "inbox", "read", "--team", "alpha", "--agent", "alice")
		if len(msgs) != 1 || msgs[0].Text != text {
			t.Errorf("--json text = %+v; want the frame as stored", msgs)
		}
	})
}

func TestInboxWatch(t *testing.T) {
	forEachStore(t, func(t *testing.T, h *harness) {
		h.roster()
		h.ok("inbox", "send", "--team", "alpha", "--from", "bob", "--to", "alice", "old and read")
		h.ok("inbox", "read", "--team", "alpha", "--agent", "alice", "--mark-read")
		h.ok("inbox", "send", "--team", "alpha", "--from", "bob", "--to", "alice", "waiting unread")

		out := newSyncBuffer()
		stop := h.runAsync(out, "inbox", "watch", "--team", "alpha", "--agent", "alice")
		out.waitFor(t, "the unread message", func(s string) bool { return strings.Contains(s, "waiting unread") })
		h.ok("inbox", "send", "--team", "alpha", "--from", "team-lead", "--to", "alice", "sent while watching")
		h.ok("inbox", "send", "--team", "alpha", "--from", "bob", "--to", "*", "a broadcast")
		got := out.waitFor(t, "the new messages", func(s string) bool {
			return strings.Contains(s, "sent while watching") && strings.Contains(s, "a broadcast")
		})
		if err := stop(); err != nil {
			t.Errorf("watch ended with %v; want nil on interrupt", err)
		}
		for _, text := range []string{"waiting unread", "sent while watching", "a broadcast"} {
			if n := strings.Count(got, text); n != 1 {
				t.Errorf("watch printed %q %d times; want once:\n%s", text, n, got)
			}
		}
		if strings.Contains(got, "old and read") {
			t.Errorf("watch printed a message read before it started:\n%s", got)
		}
		if !strings.Contains(got, "team-lead: sent while watching") {
			t.Errorf("watch output lacks the sender:\n%s", got)
		}
	})
}

func TestInboxWatchJSON(t *testing.T) {
	forEachStore(t, func(t *testing.T, h *harness) {
		h.roster()
		h.ok("inbox", "send", "--team", "alpha", "--from", "bob", "--to", "alice", "read before")
		h.ok("inbox", "read", "--team", "alpha", "--agent", "alice", "--mark-read")

		out := newSyncBuffer()
		stop := h.runAsync(out, "--json", "inbox", "watch", "--team", "alpha", "--agent", "alice", "--all", "--mark-read")
		out.waitFor(t, "the read message (--all)", func(s string) bool { return strings.Contains(s, "read before") })
		h.ok("inbox", "send", "--team", "alpha", "--from", "bob", "--to", "alice", "fresh")
		got := out.waitFor(t, "the new message", func(s string) bool { return strings.Count(s, "\n") >= 2 })
		// The watcher marks after printing; wait for that before stopping it.
		waitUnread(t, h, 0)
		if err := stop(); err != nil {
			t.Errorf("watch ended with %v; want nil", err)
		}
		var texts []string
		sc := bufio.NewScanner(strings.NewReader(got))
		for sc.Scan() {
			var m mailbox.Message
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Fatalf("watch --json line %q: %v", sc.Text(), err)
			}
			texts = append(texts, m.Text)
		}
		if want := []string{"read before", "fresh"}; !cmp.Equal(texts, want) {
			t.Errorf("watch --json texts = %q; want %q", texts, want)
		}
	})
}

// waitUnread waits, by watching alice's inbox, until it holds n unread
// messages.
func waitUnread(t *testing.T, h *harness, n int) {
	t.Helper()
	s, err := h.openStore(h.home)
	if err != nil {
		t.Fatal(err)
	}
	if s.Close != nil {
		defer s.Close()
	}
	kicks, err := s.Mail.Watch(t.Context(), "alpha", "alice")
	if err != nil {
		t.Fatal(err)
	}
	for {
		msgs, err := s.Mail.Read(t.Context(), "alpha", "alice", true)
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == n {
			return
		}
		if _, ok := <-kicks; !ok {
			t.Fatalf("watch closed with %d unread; want %d", len(msgs), n)
		}
	}
}
