// Package mailboxtest is the conformance suite for mailbox.Store
// implementations: Run checks the delivery semantics of the mailbox package
// doc (roster checks, broadcast, unique ids, per-sender order, read marks,
// retention, watch kicks) and that messages and protocol frames survive a
// round trip through the store.
//
// An implementation's test calls Run with a function that opens fresh
// stores sharing one backend, configured to keep KeepRead read messages:
//
//	func TestConformance(t *testing.T) {
//		mailboxtest.Run(t, func(t *testing.T) (team.Store, mailbox.Store) {
//			s := mem.New(mem.Options{KeepRead: mailboxtest.KeepRead})
//			t.Cleanup(func() { s.Close() })
//			return s.Teams(), s.Mail()
//		})
//	}
package mailboxtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/team"
)

// KeepRead is the retention bound the stores under test must be configured
// with: an inbox keeps at most this many read messages.
const KeepRead = 5

// Sizes and bounds of the suite: Senders goroutines send PerSender
// messages each to one inbox, and a Watch must kick within WatchDeadline.
const (
	Senders       = 8
	PerSender     = 50
	WatchDeadline = 5 * time.Second
)

// teamName is the team every case creates.
const teamName = "crew"

// idPattern is the shape of a msg_id: a lowercase UUID.
var idPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// Run runs the suite. open must return stores sharing one fresh, empty
// backend for each call; it runs once per subtest.
func Run(t *testing.T, open func(t *testing.T) (team.Store, mailbox.Store)) {
	tests := []struct {
		name string
		fn   func(t *testing.T, ts team.Store, ms mailbox.Store)
	}{
		{"SendRead", testSendRead},
		{"SendFillsDefaults", testSendFillsDefaults},
		{"UnknownRecipient", testUnknownRecipient},
		{"NoTeam", testNoTeam},
		{"Broadcast", testBroadcast},
		{"UniqueIDs", testUniqueIDs},
		{"MarkRead", testMarkRead},
		{"Retention", testRetention},
		{"ConcurrentSenders", testConcurrentSenders},
		{"Watch", testWatch},
		{"Frames", testFrames},
		{"NoAliasing", testNoAliasing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ts, ms := open(t)
			tt.fn(t, ts, ms)
		})
	}
}

// newTeam creates teamName with the lead and the given members.
func newTeam(t *testing.T, ts team.Store, members ...string) {
	t.Helper()
	ctx := t.Context()
	now := time.Date(2026, 12, 2, 13, 13, 36, 0, time.UTC)
	c, err := team.Create(ctx, ts, team.CreateOptions{Name: teamName, Now: now, Pick: func(int) int { return 0 }})
	if err != nil {
		t.Fatalf("team.Create(%q) error: %v", teamName, err)
	}
	if c.Name != teamName {
		t.Fatalf("team.Create(%q) name = %q; want it unchanged in a fresh store", teamName, c.Name)
	}
	for _, m := range members {
		if _, err := team.AddMember(ctx, ts, teamName, team.Member{Name: m}, now); err != nil {
			t.Fatalf("team.AddMember(%q) error: %v", m, err)
		}
	}
}

func send(t *testing.T, ms mailbox.Store, to string, msg mailbox.Message) []mailbox.Delivery {
	t.Helper()
	d, err := ms.Send(t.Context(), teamName, to, msg)
	if err != nil {
		t.Fatalf("Send(%q -> %q) error: %v", msg.From, to, err)
	}
	return d
}

func read(t *testing.T, ms mailbox.Store, agent string, unreadOnly bool) []mailbox.Message {
	t.Helper()
	got, err := ms.Read(t.Context(), teamName, agent, unreadOnly)
	if err != nil {
		t.Fatalf("Read(%q, unreadOnly=%v) error: %v", agent, unreadOnly, err)
	}
	return got
}

func texts(msgs []mailbox.Message) []string {
	out := []string{}
	for _, m := range msgs {
		out = append(out, m.Text)
	}
	return out
}

func testSendRead(t *testing.T, ts team.Store, ms mailbox.Store) {
	newTeam(t, ts, "alice", "bob")
	sent := mailbox.Message{
		From:      "alice",
		Text:      "hello ✓\n\"quoted\" <b>&amp;</b>",
		Summary:   "greeting",
		Color:     "blue",
		Timestamp: time.Date(2026, 12, 2, 13, 13, 36, 880_123_456, time.FixedZone("X", 3600)),
		Extra: map[string]json.RawMessage{
			"lead_sig":    json.RawMessage(`"c2lnbmF0dXJl"`),
			"from_plugin": json.RawMessage(`"my-plugin"`),
			"nested":      json.RawMessage(`{"a":[1,2,{"b":null}]}`),
		},
	}
	d := send(t, ms, "bob", sent)
	if len(d) != 1 || d[0].To != "bob" || d[0].ID == "" {
		t.Fatalf("Send(alice -> bob) deliveries = %+v; want one to bob with an id", d)
	}
	got := read(t, ms, "bob", false)
	if len(got) != 1 {
		t.Fatalf("Read(bob) = %d messages; want 1", len(got))
	}
	want := sent
	want.ID = d[0].ID
	want.Type = "message"
	want.Timestamp = time.Date(2026, 12, 2, 12, 13, 36, 880_000_000, time.UTC)
	if diff := cmp.Diff(want, got[0], cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("Read(bob) mismatch (-want +got):\n%s", diff)
	}
	if !idPattern.MatchString(got[0].ID) {
		t.Errorf("message id = %q; want a lowercase UUID", got[0].ID)
	}
	if n := len(read(t, ms, "alice", false)); n != 0 {
		t.Errorf("Read(alice) = %d messages; want 0 (she only sent)", n)
	}
}

func testSendFillsDefaults(t *testing.T, ts team.Store, ms mailbox.Store) {
	newTeam(t, ts, "alice")
	send(t, ms, "alice", mailbox.Message{From: team.LeadName, Text: "no timestamp", Read: true})
	got := read(t, ms, "alice", true)
	if len(got) != 1 {
		t.Fatalf("Read(alice, unreadOnly) = %d messages; want 1 (Send clears Read)", len(got))
	}
	m := got[0]
	if m.Timestamp.IsZero() || !m.Timestamp.Equal(m.Timestamp.Truncate(time.Millisecond)) {
		t.Errorf("filled timestamp = %v; want a non-zero time with millisecond precision", m.Timestamp)
	}
	if m.Type != "message" || m.Read || m.ID == "" {
		t.Errorf("filled message = {Type %q, Read %v, ID %q}; want {message, false, non-empty}", m.Type, m.Read, m.ID)
	}
	if _, err := ms.Send(t.Context(), teamName, "alice", mailbox.Message{Text: "anonymous"}); err == nil {
		t.Errorf("Send with an empty From succeeded; want an error")
	}
}

func testUnknownRecipient(t *testing.T, ts team.Store, ms mailbox.Store) {
	newTeam(t, ts, "alice", "bob")
	d, err := ms.Send(t.Context(), teamName, "carol", mailbox.Message{From: "alice", Text: "for carol"})
	var ue *mailbox.UnknownRecipientError
	if !errors.As(err, &ue) {
		t.Fatalf("Send to carol error = %v; want a *UnknownRecipientError", err)
	}
	if !errors.Is(err, mailbox.ErrUnknownRecipient) {
		t.Errorf("Send to carol error = %v; want it to match ErrUnknownRecipient", err)
	}
	if len(d) != 0 {
		t.Errorf("Send to carol deliveries = %+v; want none", d)
	}
	if ue.Name != "carol" || ue.Team != teamName {
		t.Errorf("UnknownRecipientError = {Team %q, Name %q}; want {%q, carol}", ue.Team, ue.Name, teamName)
	}
	valid := slices.Sorted(slices.Values(ue.Valid))
	if diff := cmp.Diff([]string{"alice", "bob", team.LeadName}, valid); diff != "" {
		t.Errorf("UnknownRecipientError.Valid mismatch (-want +got):\n%s", diff)
	}
	checkNoInbox(t, ms, "carol", "for carol")
	// Case matters: "Bob" is not "bob".
	if _, err := ms.Send(t.Context(), teamName, "Bob", mailbox.Message{From: "alice", Text: "x"}); !errors.Is(err, mailbox.ErrUnknownRecipient) {
		t.Errorf("Send to Bob (member is bob) error = %v; want ErrUnknownRecipient", err)
	}
	// Once carol joins, her inbox starts empty: the refused send left nothing.
	if _, err := team.AddMember(t.Context(), ts, teamName, team.Member{Name: "carol"}, time.Now()); err != nil {
		t.Fatalf("AddMember(carol) error: %v", err)
	}
	if got := read(t, ms, "carol", false); len(got) != 0 {
		t.Errorf("Read(carol) after joining = %q; want no messages", texts(got))
	}
}

// checkNoInbox fails if agent's inbox holds a message with text.
func checkNoInbox(t *testing.T, ms mailbox.Store, agent, text string) {
	t.Helper()
	got, err := ms.Read(t.Context(), teamName, agent, false)
	if err != nil {
		return // an error is an acceptable answer for an inbox that does not exist
	}
	if slices.Contains(texts(got), text) {
		t.Errorf("Read(%q) = %q; the refused message was stored", agent, texts(got))
	}
	if len(got) != 0 {
		t.Errorf("Read(%q) = %d messages; want none", agent, len(got))
	}
}

func testNoTeam(t *testing.T, ts team.Store, ms mailbox.Store) {
	newTeam(t, ts, "alice")
	for _, to := range []string{"alice", mailbox.Broadcast} {
		d, err := ms.Send(t.Context(), "ghost", to, mailbox.Message{From: "alice", Text: "boo"})
		if !errors.Is(err, mailbox.ErrNoTeam) {
			t.Errorf("Send(ghost, %q) error = %v; want ErrNoTeam", to, err)
		}
		if len(d) != 0 {
			t.Errorf("Send(ghost, %q) deliveries = %+v; want none", to, d)
		}
	}
	if got, err := ms.Read(t.Context(), "ghost", "alice", false); err == nil && len(got) != 0 {
		t.Errorf("Read(ghost, alice) = %q; want no messages", texts(got))
	}
}

func testBroadcast(t *testing.T, ts team.Store, ms mailbox.Store) {
	newTeam(t, ts, "alice", "bob", "carol")
	d := send(t, ms, mailbox.Broadcast, mailbox.Message{From: "alice", Text: "all hands", Summary: "sync"})
	if len(d) == 0 || d[len(d)-1].To != team.LeadName {
		t.Errorf("broadcast deliveries %+v; want the lead's copy last, so every other copy is stored when the lead sees its own", d)
	}
	var to []string
	ids := map[string]string{}
	for _, x := range d {
		to = append(to, x.To)
		if prev, dup := ids[x.ID]; dup {
			t.Errorf("broadcast copies to %s and %s share id %q", prev, x.To, x.ID)
		}
		ids[x.ID] = x.To
	}
	slices.Sort(to)
	if diff := cmp.Diff([]string{"bob", "carol", team.LeadName}, to); diff != "" {
		t.Errorf("broadcast recipients mismatch (-want +got):\n%s", diff)
	}
	for _, x := range d {
		got := read(t, ms, x.To, false)
		if len(got) != 1 || got[0].ID != x.ID || got[0].Text != "all hands" || got[0].From != "alice" {
			t.Errorf("Read(%q) = %+v; want the broadcast with id %q", x.To, got, x.ID)
		}
	}
	if got := read(t, ms, "alice", false); len(got) != 0 {
		t.Errorf("Read(alice) = %q; the sender must not get her own broadcast", texts(got))
	}
}

func testUniqueIDs(t *testing.T, ts team.Store, ms mailbox.Store) {
	newTeam(t, ts, "alice", "bob")
	seen := map[string]bool{}
	const n = 60
	for i := range n {
		to := []string{"alice", "bob", mailbox.Broadcast}[i%3]
		for _, d := range send(t, ms, to, mailbox.Message{From: team.LeadName, Text: fmt.Sprint(i)}) {
			if seen[d.ID] {
				t.Fatalf("send %d: id %q handed out twice", i, d.ID)
			}
			seen[d.ID] = true
		}
	}
	stored := map[string]bool{}
	for _, agent := range []string{"alice", "bob"} {
		for _, m := range read(t, ms, agent, false) {
			if stored[m.ID] {
				t.Errorf("id %q stored twice", m.ID)
			}
			stored[m.ID] = true
		}
	}
	if diff := cmp.Diff(seen, stored); diff != "" {
		t.Errorf("stored ids differ from delivered ids (-delivered +stored):\n%s", diff)
	}
}

func testMarkRead(t *testing.T, ts team.Store, ms mailbox.Store) {
	ctx := t.Context()
	newTeam(t, ts, "alice")
	var ids []string
	for i := range 4 {
		ids = append(ids, send(t, ms, "alice", mailbox.Message{From: team.LeadName, Text: fmt.Sprint("m", i)})[0].ID)
	}
	tests := []struct {
		name string
		ids  []string
		want int
	}{
		{"two and an unknown id", []string{ids[0], ids[2], "no-such-id"}, 2},
		{"the same again", []string{ids[0], ids[2]}, 0},
		{"none", nil, 0},
		{"one more, twice", []string{ids[3], ids[3]}, 1},
	}
	for _, tt := range tests {
		n, err := ms.MarkRead(ctx, teamName, "alice", tt.ids)
		if err != nil || n != tt.want {
			t.Errorf("MarkRead(%s) = %d, %v; want %d, nil", tt.name, n, err, tt.want)
		}
	}
	var flags []string
	for _, m := range read(t, ms, "alice", false) {
		flags = append(flags, fmt.Sprintf("%s read=%v", m.Text, m.Read))
	}
	want := []string{"m0 read=true", "m1 read=false", "m2 read=true", "m3 read=true"}
	if diff := cmp.Diff(want, flags); diff != "" {
		t.Errorf("read flags mismatch (-want +got):\n%s", diff)
	}
	if got := texts(read(t, ms, "alice", true)); !slices.Equal(got, []string{"m1"}) {
		t.Errorf("Read(alice, unreadOnly) = %q; want [m1]", got)
	}
	if n, err := ms.MarkRead(ctx, teamName, "nobody", []string{ids[1]}); err == nil && n != 0 {
		t.Errorf("MarkRead in another inbox = %d; want 0 (ids are per inbox)", n)
	}
	if n, err := ms.MarkRead(ctx, teamName, "alice", []string{"no-such-id"}); err != nil || n != 0 {
		t.Errorf("MarkRead(unknown id) = %d, %v; want 0, nil", n, err)
	}
}

// testRetention interleaves unread messages with more than KeepRead read
// ones: after the next write only the newest KeepRead read messages remain,
// and every unread one.
func testRetention(t *testing.T, ts team.Store, ms mailbox.Store) {
	ctx := t.Context()
	newTeam(t, ts, "alice")
	var wantUnread []string
	total := 2*KeepRead + 3
	var readTexts []string
	for i := range total {
		text := fmt.Sprint("m", i)
		id := send(t, ms, "alice", mailbox.Message{From: team.LeadName, Text: text})[0].ID
		if i%4 == 1 {
			wantUnread = append(wantUnread, text)
			continue
		}
		if n, err := ms.MarkRead(ctx, teamName, "alice", []string{id}); err != nil || n != 1 {
			t.Fatalf("MarkRead(%s) = %d, %v; want 1, nil", text, n, err)
		}
		readTexts = append(readTexts, text)
	}
	send(t, ms, "alice", mailbox.Message{From: team.LeadName, Text: "last"})
	wantUnread = append(wantUnread, "last")
	wantRead := readTexts[len(readTexts)-KeepRead:]

	var gotRead, gotUnread []string
	for _, m := range read(t, ms, "alice", false) {
		if m.Read {
			gotRead = append(gotRead, m.Text)
		} else {
			gotUnread = append(gotUnread, m.Text)
		}
	}
	if diff := cmp.Diff(wantRead, gotRead); diff != "" {
		t.Errorf("read messages kept (KeepRead %d) mismatch (-want +got):\n%s", KeepRead, diff)
	}
	if diff := cmp.Diff(wantUnread, gotUnread); diff != "" {
		t.Errorf("unread messages mismatch; none may be pruned (-want +got):\n%s", diff)
	}

	// Many unread messages are all kept, however many there are.
	for i := range 3 * KeepRead {
		send(t, ms, "alice", mailbox.Message{From: team.LeadName, Text: fmt.Sprint("u", i)})
	}
	if n := len(read(t, ms, "alice", true)); n != len(wantUnread)+3*KeepRead {
		t.Errorf("unread count = %d; want %d (unread messages are never pruned)", n, len(wantUnread)+3*KeepRead)
	}
}
