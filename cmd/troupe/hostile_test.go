package main

import (
	"strings"
	"testing"
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
