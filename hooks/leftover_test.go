package hooks

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A hook that prints a deny and leaves a background child (a notifier, a
// logger) holding its stdout exited 0: its deny holds, and the child goes
// with it. (Wait returned ErrWaitDelay, which was taken for a failure to
// run: the deny became a warning and the call went ahead.)
func TestHookBackgroundChild(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	s := script(t, dir, "deny.sh", `cat >/dev/null
echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}}'
sleep 30 & echo $! > "`+pidFile+`"
exit 0`)
	r, runs := runner(t, dir, settingsFor("PreToolUse", "Bash", s))
	o := r.Run(t.Context(), Input{HookEventName: PreToolUse, ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"rm -rf /"}`)})
	if !o.Block || o.Permission != "deny" {
		t.Errorf("Outcome = Block %v Permission %q Warnings %q (run %+v); want the deny honoured", o.Block, o.Permission, o.Warnings, (*runs)[0])
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	fmt.Sscan(string(b), &pid)
	// Killed as Run returns; the kernel takes a moment to end it.
	deadline := time.Now().Add(5 * time.Second)
	for pid > 0 && processAlive(pid) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if pid > 0 && processAlive(pid) {
		t.Errorf("the hook's background child %d still runs 5 s after Run returned", pid)
	}
	// Exit 2 with a background child still blocks.
	s2 := script(t, dir, "b.sh", `cat >/dev/null; echo nope >&2; sleep 30 & exit 2`)
	r2, _ := runner(t, dir, settingsFor("PreToolUse", "Bash", s2))
	if o := r2.Run(t.Context(), Input{HookEventName: PreToolUse, ToolName: "Bash"}); !o.Block {
		t.Errorf("exit 2 with a background child: Outcome %+v; want block", o)
	}
}

// A PreToolUse decision longer than MaxOutput cannot be read whole (it
// may be a deny): the call is blocked, saying why, rather than let
// through with a parse warning.
func TestHookOutputTooLong(t *testing.T) {
	dir := t.TempDir()
	s := script(t, dir, "big.sh", `cat >/dev/null
printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"'
head -c 70000 /dev/zero | tr '\0' x
printf '"}}\n'`)
	r, _ := runner(t, dir, settingsFor("PreToolUse", "Bash", s))
	o := r.Run(t.Context(), Input{HookEventName: PreToolUse, ToolName: "Bash"})
	if !o.Block {
		t.Errorf("Outcome Block=%v Warnings=%.200q; want a block on output too long to read", o.Block, o.Warnings)
	}
}
