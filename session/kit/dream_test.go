package kit

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/session/record"
)

// A dream is due once enough sessions of the project were recorded since
// the last one (none yet counts as long ago); sessions of other folders
// and the current one do not count.
func TestDreamDue(t *testing.T) {
	home := t.TempDir()
	cwd, other := "/work/a", "/work/b"
	dir := filepath.Join(home, "sessions")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	add := func(id, where string) {
		l, err := record.Create(dir, record.Line{SessionID: id, Cwd: where, Provider: "scripted", Time: time.Now().UTC().Format(time.RFC3339Nano)}, os.Stderr)
		if err != nil {
			t.Fatal(err)
		}
		l.Close()
		if err := os.Mkdir(filepath.Join(dir, id), 0o700); err != nil { // its transcripts' folder
			t.Fatal(err)
		}
	}
	add("s-1", cwd)
	add("s-2", other)
	add("s-now", cwd)
	now := time.Now()
	for _, c := range []struct {
		need int
		want bool
	}{{1, true}, {2, false}} {
		got, err := DreamDue(home, cwd, "s-now", now, time.Hour, c.need)
		if err != nil || got != c.want {
			t.Errorf("DreamDue with %d sessions needed = %v, %v; want %v (one other session of the project)", c.need, got, err, c.want)
		}
	}
}
