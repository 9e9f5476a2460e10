package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/session/streamjson"
	"github.com/troupe-dev/troupe/swarm"
)

// hostile holds terminal escapes: an OSC title change, a CSI clear screen
// (7-bit and as the C1 control U+009B), a carriage return that would hide
// the start of a line, and a bidi override.
const hostile = "A\x1b]0;pwned\x07B\x1b[2JC\u009b2JD\rE\u202eF"

// assertNoControls fails if out holds a control character other than
// newline and tab, or a C1 control or bidi override.
func assertNoControls(t *testing.T, what, out string) {
	t.Helper()
	for i, r := range out {
		if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r <= 0x9f || r == 0x202e {
			t.Errorf("%s printed control %U at byte %d:\n%q", what, r, i, out)
			return
		}
	}
	if !strings.Contains(out, `\x1b]0;pwned\x07`) {
		t.Errorf("%s did not show the escape visibly:\n%q", what, out)
	}
}

// Text from the stores reaches the terminal with its control characters
// escaped, visibly, in every human-readable listing.
func TestHostileTextEscaped(t *testing.T) {
	forEachStore(t, func(t *testing.T, h *harness) {
		h.ok("team", "create", "alpha", "--description", hostile)
		h.ok("team", "add", "alpha", "alice", "--model", hostile, "--agent-type", hostile)
		h.ok("inbox", "send", "--team", "alpha", "--from", "team-lead", "--to", "alice", "--summary", hostile, hostile+"\nsecond "+hostile)
		h.ok("task", "create", "--team", "alpha", "--subject", hostile, "--description", hostile+"\n"+hostile)

		for _, args := range [][]string{
			{"team", "list"},
			{"team", "show", "alpha"},
			{"inbox", "read", "--team", "alpha", "--agent", "alice"},
			{"task", "list", "--team", "alpha"},
			{"task", "get", "--team", "alpha", "1"},
		} {
			assertNoControls(t, strings.Join(args, " "), h.ok(args...))
		}
		out := newSyncBuffer()
		stop := h.runAsync(out, "inbox", "watch", "--team", "alpha", "--agent", "alice")
		got := out.waitFor(t, "the message", func(s string) bool { return strings.Contains(s, "second") })
		if err := stop(); err != nil {
			t.Errorf("watch ended with %v", err)
		}
		assertNoControls(t, "inbox watch", got)
	})
}

// Invalid UTF-8 is refused where text is written, with an error naming the
// field, instead of being stored as U+FFFD; task text has the message cap.
func TestInvalidTextRefused(t *testing.T) {
	forEachStore(t, func(t *testing.T, h *harness) {
		h.roster()
		long := strings.Repeat("y", 1<<20+1)
		tests := []struct {
			args []string
			want string
		}{
			{[]string{"inbox", "send", "--team", "alpha", "--from", "bob", "--to", "alice", "bad \xff"}, "text: not valid UTF-8"},
			{[]string{"inbox", "send", "--team", "alpha", "--from", "bob", "--to", "alice", "--summary", "\xc3", "fine"}, "summary: not valid UTF-8"},
			{[]string{"task", "create", "--team", "alpha", "--subject", "bad \xfe"}, "subject: not valid UTF-8"},
			{[]string{"task", "create", "--team", "alpha", "--subject", "s", "--description", long}, "description: 1048577 bytes, more than the 1048576 allowed"},
			{[]string{"team", "add", "alpha", "carol", "--model", "m\xff"}, "model: not valid UTF-8"},
		}
		for _, tt := range tests {
			err := h.fail(tt.args...)
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("troupe %s: error %q; want it to contain %q", tt.args[0]+" "+tt.args[1], err, tt.want)
			}
		}
		if out := h.ok("inbox", "read", "--team", "alpha", "--agent", "alice"); strings.Contains(out, "fine") || strings.Contains(out, "bad") {
			t.Errorf("a refused message was stored:\n%s", out)
		}
		if out := h.ok("task", "list", "--team", "alpha"); strings.Contains(out, "bad") || strings.Contains(out, " s\n") {
			t.Errorf("a refused task was stored:\n%s", out)
		}
	})
}

// The team timeline of the text formats escapes what agents and messages
// carry, as the listings do.
func TestTimelineEscaped(t *testing.T) {
	var buf bytes.Buffer
	b := &background{out: streamjson.New(io.Discard, "text", "", llm.Info{}), stderr: &buf}
	b.teamEvent(swarm.Event{Time: time.Now(), Agent: "bob\x1b[8m", Kind: swarm.EventMessage, Text: hostile})
	assertNoControls(t, "the timeline", buf.String())
}
