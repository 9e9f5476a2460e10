package file

import (
	"testing"
	"time"

	"github.com/troupe-dev/troupe/internal/atomicfile"
)

// settledBefore trusts a file that stopped changing racySlack before the
// read on a file system with fine times, and only coarseSlack before on
// one that keeps whole seconds, where a rewrite in the same second keeps
// the times.
func TestSettledBefore(t *testing.T) {
	seen := time.Date(2026, 12, 5, 13, 0, 10, 500_000_000, time.UTC)
	at := func(d time.Duration) int64 { return seen.Add(d).UnixNano() }
	whole := func(d time.Duration) int64 { return seen.Add(d).Truncate(time.Second).UnixNano() }
	for _, tt := range []struct {
		name         string
		mtime, ctime int64
		want         bool
	}{
		{"fine times, changed 200 ms before", at(-200 * time.Millisecond), at(-200 * time.Millisecond), true},
		{"fine times, changed 10 ms before", at(-10 * time.Millisecond), at(-10 * time.Millisecond), false},
		{"whole seconds, changed in the second before", whole(-time.Second), whole(-time.Second), false},
		{"whole seconds, in the same second", whole(0), whole(0), false},
		{"whole seconds, four seconds before", whole(-4 * time.Second), whole(-4 * time.Second), true},
		{"fine mtime, whole ctime", at(-200 * time.Millisecond), whole(-time.Second), true},
	} {
		id := atomicfile.Identity{Exists: true, MtimeNs: tt.mtime, CtimeNs: tt.ctime}
		if got := settledBefore(id, seen); got != tt.want {
			t.Errorf("%s: settledBefore = %v; want %v", tt.name, got, tt.want)
		}
	}
	if settledBefore(atomicfile.Identity{MtimeNs: at(-time.Hour)}, seen) {
		t.Error("a file that does not exist is settled")
	}
}
