package tasklisttest

import (
	"testing"

	"github.com/troupe-dev/troupe/tasklist"
)

// testReset: Reset deletes every task of the list and no other list's, and
// the next task does not reuse a deleted id.
func testReset(t *testing.T, s tasklist.Store) {
	l, other := tasklist.New(s, "left"), tasklist.New(s, "other")
	for _, subj := range []string{"one", "two", "three"} {
		mk(t, l, tasklist.Draft{Subject: subj, Description: subj})
	}
	kept := mk(t, other, tasklist.Draft{Subject: "kept", Description: "kept"})
	n, err := l.Reset(t.Context())
	if err != nil || n != 3 {
		t.Fatalf("Reset = %d, %v; want 3, nil", n, err)
	}
	if ids := listIDs(t, s, "left"); len(ids) != 0 {
		t.Errorf("tasks left after Reset: %v", ids)
	}
	if ids := listIDs(t, s, "other"); len(ids) != 1 || ids[0] != kept.ID {
		t.Errorf("the other list after Reset: %v, want [%s]", ids, kept.ID)
	}
	next := mk(t, l, tasklist.Draft{Subject: "four", Description: "four"})
	if next.ID != "4" {
		t.Errorf("the first task after Reset has id %s, want 4 (ids are never reused)", next.ID)
	}
	if n, err := tasklist.New(s, "empty").Reset(t.Context()); err != nil || n != 0 {
		t.Errorf("Reset of an empty list = %d, %v; want 0, nil", n, err)
	}
}
