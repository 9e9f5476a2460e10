package backendtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// it2Script is a stand-in for it2 that keeps its sessions as folders
// under STATE/sessions, logs every invocation (arguments separated by
// \037, one line each) to STATE/log, and really runs the command of
// "session run" in the background, removing the session when it ends as
// iTerm2 closes a session whose shell ended.
const it2Script = `#!/bin/sh
state=STATE
line=$(printf '%s\037' "$@")
printf '%s\n' "$line" >> "$state/log"
sid=
prev=
for a in "$@"; do
	[ "$prev" = "-s" ] && sid=$a
	prev=$a
done
notfound() { echo "Error: Session '$sid' not found" >&2; exit 1; }
case "$1 $2" in
"session split")
	[ -e "$state/fail-split" ] && { echo "Error: split refused" >&2; exit 1; }
	[ -n "$sid" ] && [ ! -d "$state/sessions/$sid" ] && notfound
	d=$(mktemp -d "$state/sessions/S-XXXXXXXX") || exit 1
	echo "Created new pane: ${d##*/}"
	;;
"session send")
	[ -d "$state/sessions/$sid" ] || notfound
	;;
"session run")
	dir=$state/sessions/$sid
	[ -d "$dir" ] || notfound
	: > "$dir/ran"
	(
		/bin/sh -c "$5" &
		echo $! > "$dir/pid.tmp" && mv "$dir/pid.tmp" "$dir/pid"
		wait $!
		rm -rf "$dir"
	) < /dev/null > /dev/null 2>&1 &
	;;
"session list")
	for d in "$state"/sessions/*; do
		[ -d "$d" ] && printf 'w0t0p0:%s\tname\n' "${d##*/}"
	done
	;;
"session close")
	dir=$state/sessions/$sid
	[ -d "$dir" ] || notfound
	if [ -e "$dir/ran" ]; then
		i=0
		while [ ! -e "$dir/pid" ] && [ $i -lt 500 ]; do sleep 0.01; i=$((i+1)); done
		kill -HUP "$(cat "$dir/pid")" 2>/dev/null
	fi
	rm -rf "$dir"
	;;
*)
	echo "it2: unknown command: $*" >&2
	exit 2
	;;
esac
`

// FakeIt2 writes a stand-in for iTerm2's it2 command into a folder of
// its own (to put first on $PATH) and returns its path and its state
// folder: its sessions are folders under STATE/sessions (LEADER-1 exists,
// the leader's), each invocation is a line of STATE/log (arguments
// separated by \037), and "session run" really runs its command.
func FakeIt2(t *testing.T) (path, state string) {
	t.Helper()
	dir := t.TempDir()
	path, state = filepath.Join(dir, "it2"), filepath.Join(dir, "state")
	if err := os.MkdirAll(filepath.Join(state, "sessions", "LEADER-1"), 0o700); err != nil {
		t.Fatal(err)
	}
	script := strings.Replace(it2Script, "STATE", "'"+state+"'", 1)
	if err := os.WriteFile(path, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	return path, state
}
