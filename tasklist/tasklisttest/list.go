package tasklisttest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/troupe-dev/troupe/tasklist"
)

// listName is the list id the List tests use.
const listName = "team"

func runList(t *testing.T, open func(t *testing.T) tasklist.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s tasklist.Store)
	}{
		{"CreateWritesBothSides", testCreateWritesBothSides},
		{"UpdateWritesBothSides", testUpdateWritesBothSides},
		{"UnknownIDs", testUnknownIDs},
		{"CompleteBlocked", testCompleteBlocked},
		{"ClaimFirstReady", testClaimFirstReady},
		{"ClaimNoneReady", testClaimNoneReady},
		{"ConcurrentClaim", testConcurrentClaim},
		{"ClaimTaskRace", testClaimTaskRace},
		{"ClaimPassesOverBusy", testClaimPassesOverBusy},
		{"ClaimAfterLostRace", testClaimAfterLostRace},
		{"ClaimAnswerLost", testClaimAnswerLost},
		{"ClaimTaskErrors", testClaimTaskErrors},
		{"Release", testRelease},
		{"MetadataMerge", testMetadataMerge},
		{"DeleteStripsEdges", testDeleteStripsEdges},
		{"MissingBlockerBlocks", testMissingBlockerBlocks},
		{"TextChecked", testTextChecked},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, open(t))
		})
	}
	t.Run("Cycles", func(t *testing.T) { testCycles(t, open) })
	t.Run("Reset", func(t *testing.T) { t.Parallel(); testReset(t, open(t)) })
}

func mk(t *testing.T, l *tasklist.List, d tasklist.Draft) tasklist.Task {
	t.Helper()
	got, err := l.Create(t.Context(), d)
	if err != nil {
		t.Fatalf("List.Create(%q) error: %v", d.Subject, err)
	}
	return got
}

func update(t *testing.T, l *tasklist.List, id string, u tasklist.Update) tasklist.Result {
	t.Helper()
	res, err := l.Update(t.Context(), id, u)
	if err != nil {
		t.Fatalf("List.Update(%s) error: %v", id, err)
	}
	return res
}

func status(s tasklist.Status) *tasklist.Status { return &s }

func ptr(s string) *string { return &s }

// edges returns the stored (not normalized) edges of every task, as
// "id: blocks=[..] blockedBy=[..]" lines.
func edges(t *testing.T, s tasklist.Store) []string {
	t.Helper()
	entries, err := s.List(t.Context(), listName)
	if err != nil {
		t.Fatalf("Store.List error: %v", err)
	}
	var out []string
	for _, e := range entries {
		b, bb := slices.Clone(e.Task.Blocks), slices.Clone(e.Task.BlockedBy)
		slices.Sort(b)
		slices.Sort(bb)
		out = append(out, fmt.Sprintf("%s: blocks=%v blockedBy=%v", e.Task.ID, b, bb))
	}
	return out
}

func testCreateWritesBothSides(t *testing.T, s tasklist.Store) {
	l := tasklist.New(s, listName)
	mk(t, l, tasklist.Draft{Subject: "one"})
	mk(t, l, tasklist.Draft{Subject: "two"})
	got := mk(t, l, tasklist.Draft{Subject: "three", BlockedBy: []string{"1"}, Blocks: []string{"2"}})
	if got.ID != "3" {
		t.Fatalf("third task id = %q; want \"3\"", got.ID)
	}
	want := []string{
		"1: blocks=[3] blockedBy=[]",
		"2: blocks=[] blockedBy=[3]",
		"3: blocks=[2] blockedBy=[1]",
	}
	if diff := cmp.Diff(want, edges(t, s)); diff != "" {
		t.Errorf("stored edges after Create mismatch (-want +got):\n%s", diff)
	}
}

func testUpdateWritesBothSides(t *testing.T, s tasklist.Store) {
	l := tasklist.New(s, listName)
	for _, n := range []string{"a", "b", "c"} {
		mk(t, l, tasklist.Draft{Subject: n})
	}
	update(t, l, "2", tasklist.Update{AddBlockedBy: []string{"1"}, AddBlocks: []string{"3"}})
	want := []string{
		"1: blocks=[2] blockedBy=[]",
		"2: blocks=[3] blockedBy=[1]",
		"3: blocks=[] blockedBy=[2]",
	}
	if diff := cmp.Diff(want, edges(t, s)); diff != "" {
		t.Errorf("stored edges after Update mismatch (-want +got):\n%s", diff)
	}
}

func testUnknownIDs(t *testing.T, s tasklist.Store) {
	ctx := t.Context()
	l := tasklist.New(s, listName)
	mk(t, l, tasklist.Draft{Subject: "one"})
	tests := []struct {
		name    string
		do      func() error
		mention string
	}{
		{"create blocked by unknown", func() error {
			_, err := l.Create(ctx, tasklist.Draft{Subject: "x", BlockedBy: []string{"9"}})
			return err
		}, "9"},
		{"create blocking unknown", func() error {
			_, err := l.Create(ctx, tasklist.Draft{Subject: "x", Blocks: []string{"1", "17"}})
			return err
		}, "17"},
		{"update adding unknown blocker", func() error {
			_, err := l.Update(ctx, "1", tasklist.Update{AddBlockedBy: []string{"42"}})
			return err
		}, "42"},
		{"update of unknown task", func() error {
			_, err := l.Update(ctx, "77", tasklist.Update{Subject: ptr("s")})
			return err
		}, "77"},
		{"get unknown", func() error {
			_, err := l.Get(ctx, "78")
			return err
		}, "78"},
	}
	for _, tt := range tests {
		err := tt.do()
		if !errors.Is(err, tasklist.ErrNotFound) {
			t.Errorf("%s: error = %v; want ErrNotFound", tt.name, err)
			continue
		}
		if !strings.Contains(err.Error(), tt.mention) {
			t.Errorf("%s: error %q does not name id %s", tt.name, err, tt.mention)
		}
	}
	if diff := cmp.Diff([]string{"1: blocks=[] blockedBy=[]"}, edges(t, s)); diff != "" {
		t.Errorf("refused operations changed the list (-want +got):\n%s", diff)
	}
}

// testCycles runs each case on a fresh chain 1 -> 2 -> 3 (1 blocks 2, 2
// blocks 3) plus an unrelated task 4.
func testCycles(t *testing.T, open func(t *testing.T) tasklist.Store) {
	type op func(t *testing.T, l *tasklist.List) error
	upd := func(id string, u tasklist.Update) op {
		return func(t *testing.T, l *tasklist.List) error { _, err := l.Update(t.Context(), id, u); return err }
	}
	create := func(d tasklist.Draft) op {
		return func(t *testing.T, l *tasklist.List) error { _, err := l.Create(t.Context(), d); return err }
	}
	tests := []struct {
		name  string
		do    op
		cycle bool
	}{
		{name: "self via blocks", do: upd("2", tasklist.Update{AddBlocks: []string{"2"}}), cycle: true},
		{name: "self via blockedBy", do: upd("2", tasklist.Update{AddBlockedBy: []string{"2"}}), cycle: true},
		{name: "direct via blocks", do: upd("2", tasklist.Update{AddBlocks: []string{"1"}}), cycle: true},
		{name: "direct via blockedBy", do: upd("1", tasklist.Update{AddBlockedBy: []string{"2"}}), cycle: true},
		{name: "transitive via blocks", do: upd("3", tasklist.Update{AddBlocks: []string{"1"}}), cycle: true},
		{name: "transitive via blockedBy", do: upd("1", tasklist.Update{AddBlockedBy: []string{"3"}}), cycle: true},
		{name: "update closing a cycle through both new edges", do: upd("4", tasklist.Update{AddBlockedBy: []string{"3"}, AddBlocks: []string{"1"}}), cycle: true},
		{name: "update blocking and blocked by one task", do: upd("4", tasklist.Update{AddBlockedBy: []string{"2"}, AddBlocks: []string{"2"}}), cycle: true},
		{name: "create closing a cycle", do: create(tasklist.Draft{Subject: "n", BlockedBy: []string{"3"}, Blocks: []string{"1"}}), cycle: true},
		{name: "create blocking and blocked by one task", do: create(tasklist.Draft{Subject: "n", BlockedBy: []string{"2"}, Blocks: []string{"2"}}), cycle: true},
		{name: "redundant shortcut is fine", do: upd("1", tasklist.Update{AddBlocks: []string{"3"}})},
		{name: "existing edge again is fine", do: upd("1", tasklist.Update{AddBlocks: []string{"2"}})},
		{name: "create in a diamond is fine", do: create(tasklist.Draft{Subject: "n", BlockedBy: []string{"1"}, Blocks: []string{"3"}})},
		{name: "update in a diamond is fine", do: upd("4", tasklist.Update{AddBlockedBy: []string{"1"}, AddBlocks: []string{"3"}})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := open(t)
			l := tasklist.New(s, listName)
			for _, n := range []string{"1", "2", "3", "4"} {
				mk(t, l, tasklist.Draft{Subject: "task " + n})
			}
			update(t, l, "1", tasklist.Update{AddBlocks: []string{"2"}})
			update(t, l, "3", tasklist.Update{AddBlockedBy: []string{"2"}})
			before := edges(t, s)
			err := tt.do(t, l)
			fail := t.Errorf
			var ce *tasklist.CycleError
			switch {
			case tt.cycle && !errors.As(err, &ce):
				fail("error = %v; want a *CycleError", err)
			case tt.cycle && !errors.Is(err, tasklist.ErrCycle):
				fail("error = %v; want it to match ErrCycle", err)
			case tt.cycle && len(ce.Path) == 0:
				fail("CycleError.Path is empty; want the cycle's ids")
			case !tt.cycle && err != nil:
				fail("error = %v; want nil (no cycle)", err)
			}
			if tt.cycle {
				if diff := cmp.Diff(before, edges(t, s)); diff != "" {
					fail("a refused edge changed the stored graph (-before +after):\n%s", diff)
				}
			}
		})
	}
}

func testCompleteBlocked(t *testing.T, s tasklist.Store) {
	ctx := t.Context()
	l := tasklist.New(s, listName)
	mk(t, l, tasklist.Draft{Subject: "blocker"})
	mk(t, l, tasklist.Draft{Subject: "other blocker"})
	mk(t, l, tasklist.Draft{Subject: "blocked", BlockedBy: []string{"1", "2"}})
	update(t, l, "2", tasklist.Update{Status: status(tasklist.StatusCompleted)})

	_, err := l.Update(ctx, "3", tasklist.Update{Status: status(tasklist.StatusCompleted)})
	var be *tasklist.BlockedError
	if !errors.As(err, &be) || !errors.Is(err, tasklist.ErrBlocked) {
		t.Fatalf("completing 3 while 1 is open: error = %v; want a *BlockedError", err)
	}
	if be.ID != "3" || !slices.Equal(be.Blockers, []string{"1"}) {
		t.Errorf("BlockedError = {ID %q, Blockers %v}; want {\"3\", [1]} (2 is completed)", be.ID, be.Blockers)
	}
	if got, _ := l.Get(ctx, "3"); got.Status != tasklist.StatusPending {
		t.Errorf("after a refused completion, status = %q; want pending", got.Status)
	}
	// Moving it to in_progress is not completion and is allowed.
	update(t, l, "3", tasklist.Update{Status: status(tasklist.StatusInProgress)})
	update(t, l, "1", tasklist.Update{Status: status(tasklist.StatusCompleted)})
	res := update(t, l, "3", tasklist.Update{Status: status(tasklist.StatusCompleted)})
	if res.Task.Status != tasklist.StatusCompleted || res.From != tasklist.StatusInProgress {
		t.Errorf("completing 3 = (status %q, from %q); want (completed, in_progress)", res.Task.Status, res.From)
	}
}

func testMetadataMerge(t *testing.T, s tasklist.Store) {
	l := tasklist.New(s, listName)
	mk(t, l, tasklist.Draft{Subject: "m", Metadata: map[string]json.RawMessage{
		"a": json.RawMessage(`1`), "b": json.RawMessage(`"two"`), "gone": json.RawMessage(`null`),
	}})
	res := update(t, l, "1", tasklist.Update{Metadata: map[string]json.RawMessage{
		"b": json.RawMessage(`null`), "c": json.RawMessage(`{"x":[1,2]}`), "absent": json.RawMessage(`null`),
	}})
	want := map[string]string{"a": `1`, "c": `{"x":[1,2]}`}
	for _, task := range []tasklist.Task{res.Task, mustGetTask(t, l, "1")} {
		got := map[string]string{}
		for k, v := range task.Metadata {
			got[k] = string(v)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("metadata after merge mismatch (-want +got):\n%s", diff)
		}
	}
	if !slices.Contains(res.Updated, "metadata") {
		t.Errorf("Result.Updated = %v; want it to list metadata", res.Updated)
	}
}

func mustGetTask(t *testing.T, l *tasklist.List, id string) tasklist.Task {
	t.Helper()
	got, err := l.Get(t.Context(), id)
	if err != nil {
		t.Fatalf("List.Get(%s) error: %v", id, err)
	}
	return got
}

func testDeleteStripsEdges(t *testing.T, s tasklist.Store) {
	ctx := t.Context()
	l := tasklist.New(s, listName)
	mk(t, l, tasklist.Draft{Subject: "one"})
	mk(t, l, tasklist.Draft{Subject: "two", BlockedBy: []string{"1"}})
	mk(t, l, tasklist.Draft{Subject: "three", BlockedBy: []string{"2"}})

	res := update(t, l, "2", tasklist.Update{Status: status(tasklist.StatusDeleted)})
	if !res.Deleted {
		t.Errorf("Update(2, deleted).Deleted = false; want true")
	}
	if _, err := l.Get(ctx, "2"); !errors.Is(err, tasklist.ErrNotFound) {
		t.Errorf("Get(2) after delete error = %v; want ErrNotFound", err)
	}
	want := []string{
		"1: blocks=[] blockedBy=[]",
		"3: blocks=[] blockedBy=[]",
	}
	if diff := cmp.Diff(want, edges(t, s)); diff != "" {
		t.Errorf("stored edges after delete mismatch (-want +got):\n%s", diff)
	}
	if got := mk(t, l, tasklist.Draft{Subject: "four"}); got.ID != "4" {
		t.Errorf("Create after deleting 2 of 3 = id %q; want \"4\"", got.ID)
	}
	if _, err := l.Update(ctx, "2", tasklist.Update{Status: status(tasklist.StatusDeleted)}); !errors.Is(err, tasklist.ErrNotFound) {
		t.Errorf("deleting 2 again error = %v; want ErrNotFound", err)
	}
}

// testMissingBlockerBlocks removes a blocker through the Store, as a delete
// that stopped before unlinking it would leave it: a blocker that cannot be
// read is not known to be finished, so its task stays unclaimable and
// cannot be completed until a delete of the missing id unlinks it.
func testMissingBlockerBlocks(t *testing.T, s tasklist.Store) {
	ctx := t.Context()
	l := tasklist.New(s, listName)
	mk(t, l, tasklist.Draft{Subject: "blocker"})
	mk(t, l, tasklist.Draft{Subject: "blocked", BlockedBy: []string{"1"}})
	_, rev := mustGet(t, s, listName, "1")
	if err := s.Delete(ctx, listName, "1", rev); err != nil {
		t.Fatalf("Store.Delete(1) error: %v", err)
	}

	if got, err := l.Claim(ctx, "alice"); !errors.Is(err, tasklist.ErrNoneReady) {
		t.Errorf("Claim(alice) = task %q, %v; want ErrNoneReady (2's blocker is missing)", got.ID, err)
	}
	var be *tasklist.BlockedError
	_, err := l.ClaimTask(ctx, "2", "alice")
	if !errors.As(err, &be) || !slices.Equal(be.Blockers, []string{"1"}) || !errors.Is(be.Unreadable["1"], tasklist.ErrNotFound) {
		t.Fatalf("ClaimTask(2, alice) error = %v; want a *BlockedError naming 1 as missing", err)
	}
	if !strings.Contains(err.Error(), "#1, which is missing") {
		t.Errorf("ClaimTask(2, alice) error = %q; want it to say #1 is missing", err)
	}
	if _, err := l.Update(ctx, "2", tasklist.Update{Status: status(tasklist.StatusCompleted)}); !errors.As(err, &be) {
		t.Errorf("completing 2 error = %v; want a *BlockedError", err)
	}
	tasks, err := l.Tasks(ctx)
	if err != nil || len(tasks) != 1 || !slices.Equal(tasks[0].BlockedBy, []string{"1"}) {
		t.Errorf("Tasks() = %+v, %v; want task 2 still blocked by 1", tasks, err)
	}

	// Deleting the missing id finishes the interrupted delete.
	if _, err := l.Update(ctx, "1", tasklist.Update{Status: status(tasklist.StatusDeleted)}); err != nil {
		t.Fatalf("deleting missing 1 (still named by 2) error = %v; want it to unlink 1", err)
	}
	if got, err := l.ClaimTask(ctx, "2", "alice"); err != nil || got.Owner != "alice" {
		t.Errorf("ClaimTask(2, alice) after unlinking = {Owner %q}, %v; want alice, nil", got.Owner, err)
	}
	if _, err := l.Update(ctx, "1", tasklist.Update{Status: status(tasklist.StatusDeleted)}); !errors.Is(err, tasklist.ErrNotFound) {
		t.Errorf("deleting 1 once more error = %v; want ErrNotFound", err)
	}
}

// testTextChecked refuses invalid UTF-8 (which JSON would silently replace)
// in every write path, and text past MaxTextLen in List's, naming the field.
func testTextChecked(t *testing.T, s tasklist.Store) {
	ctx := t.Context()
	l := tasklist.New(s, listName)
	long := strings.Repeat("x", tasklist.MaxTextLen+1)
	refused := []struct {
		name  string
		draft tasklist.Draft
		want  []string // in the error
	}{
		{"bad subject", tasklist.Draft{Subject: "a\xffb"}, []string{"subject", "UTF-8"}},
		{"bad description", tasklist.Draft{Subject: "s", Description: "\xc3"}, []string{"description", "UTF-8"}},
		{"long subject", tasklist.Draft{Subject: long}, []string{"subject", fmt.Sprint(tasklist.MaxTextLen)}},
		{"long description", tasklist.Draft{Subject: "s", Description: long}, []string{"description", fmt.Sprint(tasklist.MaxTextLen)}},
	}
	for _, tt := range refused {
		_, err := l.Create(ctx, tt.draft)
		if !errors.Is(err, tasklist.ErrInvalid) {
			t.Errorf("Create(%s) error = %v; want ErrInvalid", tt.name, err)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Create(%s) error = %q; want it to mention %q", tt.name, err, w)
			}
		}
	}
	if tasks, _ := l.Tasks(ctx); len(tasks) != 0 {
		t.Errorf("refused creates stored %d tasks", len(tasks))
	}
	mk(t, l, tasklist.Draft{Subject: "fine"})
	if _, err := l.Update(ctx, "1", tasklist.Update{Description: ptr(long)}); !errors.Is(err, tasklist.ErrInvalid) || !strings.Contains(err.Error(), "description") {
		t.Errorf("Update(description too long) error = %v; want ErrInvalid naming description", err)
	}
	task, rev := mustGet(t, s, listName, "1")
	task.Subject = "bad \xfe"
	if _, err := s.Put(ctx, listName, task, rev); !errors.Is(err, tasklist.ErrInvalid) || !strings.Contains(err.Error(), "subject") {
		t.Errorf("Store.Put(invalid UTF-8 subject) error = %v; want ErrInvalid naming subject", err)
	}
	if _, _, err := s.Create(ctx, listName, tasklist.Task{Subject: "ok", Description: "\xff"}); !errors.Is(err, tasklist.ErrInvalid) {
		t.Errorf("Store.Create(invalid UTF-8 description) error = %v; want ErrInvalid", err)
	}
}
