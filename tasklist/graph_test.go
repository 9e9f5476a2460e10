package tasklist_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/troupe-dev/troupe/tasklist"
)

var cmpEmpty = cmpopts.EquateEmpty()

// task builds a task with the given id, status and edges.
func task(id string, status tasklist.Status, blocks, blockedBy []string) tasklist.Task {
	return tasklist.Task{ID: id, Subject: "t" + id, Status: status, Blocks: blocks, BlockedBy: blockedBy}
}

// edgeList renders each task's edges as "id>blocks<blockedBy".
func edgeList(tasks []tasklist.Task) []string {
	var out []string
	for _, t := range tasks {
		out = append(out, t.ID+">"+join(t.Blocks)+"<"+join(t.BlockedBy))
	}
	return out
}

func join(ids []string) string {
	s := ""
	for i, id := range ids {
		if i > 0 {
			s += ","
		}
		s += id
	}
	return s
}

const (
	pending    = tasklist.StatusPending
	inProgress = tasklist.StatusInProgress
	completed  = tasklist.StatusCompleted
)

func TestNormalize(t *testing.T) {
	tests := []struct {
		name string
		in   []tasklist.Task
		want []string
	}{
		{"one-sided blocks", []tasklist.Task{task("1", pending, []string{"2"}, nil), task("2", pending, nil, nil)},
			[]string{"1>2<", "2><1"}},
		{"one-sided blockedBy", []tasklist.Task{task("1", pending, nil, nil), task("2", pending, nil, []string{"1"})},
			[]string{"1>2<", "2><1"}},
		// A blocker that is not in the list may be unreadable: it stays.
		{"dangling blocks dropped, blockedBy kept", []tasklist.Task{task("1", pending, []string{"9"}, []string{"8", "2"}), task("2", pending, nil, nil)},
			[]string{"1><2,8", "2>1<"}},
		{"self edge dropped", []tasklist.Task{task("1", pending, []string{"1"}, []string{"1"})},
			[]string{"1><"}},
		{"numeric id order", []tasklist.Task{task("10", pending, nil, []string{"9", "2"}), task("9", pending, nil, nil), task("2", pending, nil, nil)},
			[]string{"2>10<", "9>10<", "10><2,9"}},
		{"duplicates merged", []tasklist.Task{task("1", pending, []string{"2", "2"}, nil), task("2", pending, nil, []string{"1", "1"})},
			[]string{"1>2<", "2><1"}},
		{"empty", nil, nil},
	}
	for _, tt := range tests {
		in := make([]tasklist.Task, len(tt.in))
		for i, x := range tt.in {
			in[i] = x.Clone()
		}
		got := tasklist.Normalize(in)
		if diff := cmp.Diff(tt.want, edgeList(got)); diff != "" {
			t.Errorf("Normalize(%s) mismatch (-want +got):\n%s", tt.name, diff)
		}
		for _, x := range got {
			if x.Blocks == nil || x.BlockedBy == nil {
				t.Errorf("Normalize(%s): task %s has nil edges; want empty slices", tt.name, x.ID)
			}
		}
		if diff := cmp.Diff(tt.in, in, cmpEmpty); diff != "" {
			t.Errorf("Normalize(%s) changed its input (-before +after):\n%s", tt.name, diff)
		}
	}
}

func TestOpenBlockersAndReady(t *testing.T) {
	tasks := tasklist.Normalize([]tasklist.Task{
		task("1", completed, []string{"4"}, nil),
		task("2", inProgress, []string{"4", "5"}, nil),
		task("3", pending, []string{"6"}, nil),
		task("4", pending, nil, nil),
		task("5", pending, nil, nil),
		task("6", pending, nil, nil),
		task("7", pending, nil, []string{"99"}), // unreadable or missing blocker
		{ID: "8", Status: pending, Owner: "alice"},
		task("9", pending, nil, nil),
	})
	tests := []struct {
		id   string
		open []string
	}{
		{"4", []string{"2"}},
		{"5", []string{"2"}},
		{"6", []string{"3"}},
		{"7", []string{"99"}},
		{"9", nil},
	}
	byID := map[string]tasklist.Task{}
	for _, x := range tasks {
		byID[x.ID] = x
	}
	for _, tt := range tests {
		if got := tasklist.OpenBlockers(byID[tt.id], tasks); !cmp.Equal(got, tt.open, cmpEmpty) {
			t.Errorf("OpenBlockers(%s) = %v; want %v", tt.id, got, tt.open)
		}
	}
	// A blocker that cannot be read is not known to be finished: it blocks.
	if got := tasklist.OpenBlockers(task("7", pending, nil, []string{"99"}), tasks); !cmp.Equal(got, []string{"99"}) {
		t.Errorf("OpenBlockers(raw 7) = %v; want [99] (99 cannot be read)", got)
	}
	var ready []string
	for _, x := range tasklist.Ready(tasks) {
		ready = append(ready, x.ID)
	}
	// 1 completed, 2 in progress, 4-7 blocked, 8 owned.
	if diff := cmp.Diff([]string{"3", "9"}, ready); diff != "" {
		t.Errorf("Ready ids mismatch (-want +got):\n%s", diff)
	}
	for id, want := range map[string]bool{"3": true, "4": false, "7": false, "8": false, "1": false, "2": false} {
		if got := tasklist.Claimable(byID[id], tasks); got != want {
			t.Errorf("Claimable(%s) = %v; want %v", id, got, want)
		}
	}
}

func TestFindCycle(t *testing.T) {
	// 1 -> 2 -> 3 -> 4, and 1 -> 5 -> 4 (a diamond with a tail); 6 alone.
	tasks := tasklist.Normalize([]tasklist.Task{
		task("1", pending, []string{"2", "5"}, nil),
		task("2", pending, []string{"3"}, nil),
		task("3", pending, []string{"4"}, nil),
		task("4", pending, nil, nil),
		task("5", pending, []string{"4"}, nil),
		task("6", pending, nil, nil),
	})
	tests := []struct {
		blocker, blocked string
		want             []string
	}{
		{"1", "1", []string{"1"}},
		{"2", "1", []string{"1", "2"}},
		{"4", "1", []string{"1", "5", "4"}}, // the shortest way back
		{"3", "2", []string{"2", "3"}},
		{"4", "2", []string{"2", "3", "4"}},
		{"1", "4", nil},
		{"1", "3", nil},
		{"5", "2", nil},
		{"6", "1", nil},
		{"1", "6", nil},
		{"1", "99", nil},
	}
	for _, tt := range tests {
		got := tasklist.FindCycle(tasks, tt.blocker, tt.blocked)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("FindCycle(%s blocks %s) mismatch (-want +got):\n%s", tt.blocker, tt.blocked, diff)
		}
	}
}
