package task

import (
	"os"
	"strings"
	"testing"
)

// TestOutputDigest: a running shell's new output comes once, its last
// DigestLines lines with the cut marked and the text escaped; nothing new
// gives ""; the next output comes on its own; another agent's shells and
// a monitor's are left out, and an ended shell is forgotten.
func TestOutputDigest(t *testing.T) {
	r := shellRegistry(t, Config{})
	dir := t.TempDir()
	gate := dir + "/gate"
	st, err := r.StartShell(ShellSpec{Command: `seq 1 30 | sed 's/.*/line & <b>/'; while [ ! -e ` + gate + ` ]; do sleep 0.05; done; echo after; sleep 30`, Description: "count"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.StartShell(ShellSpec{Command: "echo other agent; sleep 30", AgentID: "sub-1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.StartShell(ShellSpec{Command: "echo monitored; sleep 30", Kind: "monitor"}); err != nil {
		t.Fatal(err)
	}
	// The 30 lines come in one write (sed's buffer), so that one Take
	// sees them all however loaded the machine is.
	d := r.NewOutputDigest("")
	var got string
	waitFor(t, "30 lines", func() bool {
		got = d.Take()
		return strings.Contains(got, "line 30 ")
	})
	for _, want := range []string{"<task-id>" + string(st.ID) + "</task-id>", "line 11 &lt;b&gt;", "<new-output>…\n", `Background command "count" is running`, "<system-reminder>"} {
		if !strings.Contains(got, want) {
			t.Errorf("digest lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "line 10 ") || strings.Contains(got, "other agent") || strings.Contains(got, "monitored") {
		t.Errorf("digest has more than the last %d lines, or others' shells:\n%s", DigestLines, got)
	}
	if again := d.Take(); again != "" {
		t.Errorf("a second Take with nothing new = %q", again)
	}
	os.WriteFile(gate, nil, 0o600)
	waitFor(t, "the next line", func() bool {
		got = d.Take()
		return got != ""
	})
	if !strings.Contains(got, "<new-output>after</new-output>") {
		t.Errorf("next digest:\n%s", got)
	}
	if _, err := r.Stop(t.Context(), st.ID); err != nil {
		t.Fatal(err)
	}
	d.Take()
	if len(d.offsets) != 0 {
		t.Errorf("offsets of ended tasks kept: %v", d.offsets)
	}
}
