package file_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/internal/atomicfile"
	"github.com/troupe-dev/troupe/store/file"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/tasklist/tasklisttest"
	"github.com/troupe-dev/troupe/team"
)

// ftRev is the revision the store must give a file's bytes.
func ftRev(data []byte) tasklist.Revision {
	h := fnv.New64a()
	h.Write(data)
	if r := h.Sum64(); r != 0 {
		return tasklist.Revision(r)
	}
	return 1
}

func ftIDs(entries []tasklist.Entry) []string {
	var ids []string
	for _, e := range entries {
		ids = append(ids, e.Task.ID)
	}
	return ids
}

func ftSeq(from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, strconv.Itoa(i))
	}
	return out
}

func ftCreateTasks(t *testing.T, s *file.Store, list string, n int) {
	t.Helper()
	for i := range n {
		if _, _, err := s.Tasks().Create(t.Context(), list, tasklist.Task{Subject: fmt.Sprintf("task %d", i+1)}); err != nil {
			t.Fatalf("Create = %v", err)
		}
	}
}

func TestTaskConformance(t *testing.T) {
	tasklisttest.Run(t, func(t *testing.T) tasklist.Store {
		return ftOpen(t, t.TempDir(), file.Options{}).Tasks()
	})
}

func TestTaskFileFormat(t *testing.T) {
	root := t.TempDir()
	s := ftOpen(t, root, file.Options{})
	ctx := t.Context()
	task, rev, err := s.Tasks().Create(ctx, "session-fe1abf51", tasklist.Task{ID: "99", Subject: "Greet", Description: "Say hello", ActiveForm: "Greeting"})
	if err != nil {
		t.Fatalf("Create = %v", err)
	}
	if task.ID != "1" || task.Status != tasklist.StatusPending {
		t.Errorf("Create = id %q status %q; want id 1, pending", task.ID, task.Status)
	}
	dir := filepath.Join(root, "tasks", "session-fe1abf51")
	raw, err := os.ReadFile(filepath.Join(dir, "1.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "id": "1",
  "subject": "Greet",
  "description": "Say hello",
  "activeForm": "Greeting",
  "status": "pending",
  "blocks": [],
  "blockedBy": []
}`
	if string(raw) != want {
		t.Errorf("1.json =\n%s\nwant\n%s", raw, want)
	}
	if rev != ftRev(raw) || rev == 0 {
		t.Errorf("Create revision = %d; want %d, the FNV-64a of the file", rev, ftRev(raw))
	}
	if fi, err := os.Stat(filepath.Join(dir, ".lock")); err != nil || fi.Size() != 0 || !fi.Mode().IsRegular() {
		t.Errorf(".lock = %v, %v; want an empty file", fi, err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".lock.lock")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf(".lock.lock after Create: %v; want the list lock released", err)
	}

	// A file Claude Code wrote (compact, its own key order) works with CAS.
	cc := []byte(`{"id":"2","subject":"Review","description":"","status":"in_progress","owner":"helper","blocks":[],"blockedBy":["1"],"metadata":{"lease":7}}`)
	if err := os.WriteFile(filepath.Join(dir, "2.json"), cc, 0o644); err != nil {
		t.Fatal(err)
	}
	got, rev, err := s.Tasks().Get(ctx, "session-fe1abf51", "2")
	if err != nil || rev != ftRev(cc) || got.Owner != "helper" || string(got.Metadata["lease"]) != "7" {
		t.Fatalf("Get(2) = %+v, %d, %v; want Claude Code's task at revision %d", got, rev, err, ftRev(cc))
	}
	got.Status = tasklist.StatusCompleted
	if _, err := s.Tasks().Put(ctx, "session-fe1abf51", got, rev); err != nil {
		t.Errorf("Put over Claude Code's file = %v", err)
	}
	raw, _ = os.ReadFile(filepath.Join(dir, "2.json"))
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m["status"] != "completed" || m["metadata"].(map[string]any)["lease"] != 7.0 {
		t.Errorf("2.json after Put = %s (%v)", raw, err)
	}
}

func TestTaskCompareAndSwap(t *testing.T) {
	s := ftOpen(t, t.TempDir(), file.Options{})
	ctx := t.Context()
	ts := s.Tasks()
	task, rev1, err := ts.Create(ctx, "cas", tasklist.Task{Subject: "one"})
	if err != nil {
		t.Fatal(err)
	}
	task.Subject = "two"
	rev2, err := ts.Put(ctx, "cas", task, rev1)
	if err != nil || rev2 == rev1 || rev2 == 0 {
		t.Fatalf("Put(rev1) = %d, %v; want a new revision", rev2, err)
	}
	task.Subject = "three"
	if _, err := ts.Put(ctx, "cas", task, rev1); !errors.Is(err, tasklist.ErrConflict) {
		t.Errorf("Put(stale rev) = %v; want ErrConflict", err)
	}
	if _, err := ts.Put(ctx, "cas", task, 0); !errors.Is(err, tasklist.ErrConflict) {
		t.Errorf("Put(rev 0) = %v; want ErrConflict", err)
	}
	if err := ts.Delete(ctx, "cas", "1", rev1); !errors.Is(err, tasklist.ErrConflict) {
		t.Errorf("Delete(stale rev) = %v; want ErrConflict", err)
	}
	got, rev, err := ts.Get(ctx, "cas", "1")
	if err != nil || rev != rev2 || got.Subject != "two" {
		t.Errorf("Get = %q, %d, %v; want two at %d", got.Subject, rev, err, rev2)
	}
	if err := ts.Delete(ctx, "cas", "1", rev2); err != nil {
		t.Fatalf("Delete = %v", err)
	}
	if _, _, err := ts.Get(ctx, "cas", "1"); !errors.Is(err, tasklist.ErrNotFound) {
		t.Errorf("Get after Delete = %v; want ErrNotFound", err)
	}
	if _, err := ts.Put(ctx, "cas", task, rev2); !errors.Is(err, tasklist.ErrNotFound) {
		t.Errorf("Put after Delete = %v; want ErrNotFound", err)
	}
	if err := ts.Delete(ctx, "cas", "1", rev2); !errors.Is(err, tasklist.ErrNotFound) {
		t.Errorf("Delete after Delete = %v; want ErrNotFound", err)
	}
	for _, id := range []string{"0", "01", "-1", "abc", "1.json", "../1", ""} {
		if _, _, err := ts.Get(ctx, "cas", id); !errors.Is(err, tasklist.ErrInvalid) {
			t.Errorf("Get(%q) = %v; want ErrInvalid", id, err)
		}
	}
	bad := tasklist.Task{ID: "1", Subject: "x", Status: "bogus"}
	if _, err := ts.Put(ctx, "cas", bad, rev2); !errors.Is(err, tasklist.ErrInvalid) {
		t.Errorf("Put(status bogus) = %v; want ErrInvalid", err)
	}
}

func TestTaskListNames(t *testing.T) {
	s := ftOpen(t, t.TempDir(), file.Options{})
	ctx := t.Context()
	for _, list := range []string{"", "a/b", `a\b`, "..", "../tasks", "a..b", "nul\x00", strings.Repeat("x", 129)} {
		_, err := s.Tasks().List(ctx, list)
		if !errors.Is(err, tasklist.ErrInvalid) || !strings.Contains(err.Error(), strconv.Quote(list)) {
			t.Errorf("List(%q) = %v; want ErrInvalid naming the list", list, err)
		}
		if _, _, err := s.Tasks().Create(ctx, list, tasklist.Task{Subject: "x"}); !errors.Is(err, tasklist.ErrInvalid) {
			t.Errorf("Create(%q) = %v; want ErrInvalid", list, err)
		}
		if _, err := s.Tasks().Lock(ctx, list); !errors.Is(err, tasklist.ErrInvalid) {
			t.Errorf("Lock(%q) = %v; want ErrInvalid", list, err)
		}
	}
	long := strings.Repeat("x", 128)
	if _, _, err := s.Tasks().Create(ctx, long, tasklist.Task{Subject: "x"}); err != nil {
		t.Errorf("Create(128-byte list name) = %v", err)
	}
	if entries, err := s.Tasks().List(ctx, "never-used"); err != nil || len(entries) != 0 {
		t.Errorf("List(absent list) = %v, %v; want empty", entries, err)
	}
}

func TestTaskListIgnoresOtherFiles(t *testing.T) {
	root := t.TempDir()
	s := ftOpen(t, root, file.Options{})
	ctx := t.Context()
	ftCreateTasks(t, s, "mixed", 12)
	dir := filepath.Join(root, "tasks", "mixed")
	for _, name := range []string{".highwatermark", "3.json.tmp.deadbeef", "notes.txt", "007.json", "x.json", "0.json", ".session-list"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("{not json"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"4.json.lock", ".lock.lock.moved", "13.json"} {
		if err := os.Mkdir(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := s.Tasks().List(ctx, "mixed")
	if err != nil {
		t.Fatalf("List = %v", err)
	}
	if got, want := ftIDs(entries), ftSeq(1, 12); !slices.Equal(got, want) {
		t.Errorf("List ids = %v; want %v (numeric order, task files only)", got, want)
	}
	for _, e := range entries {
		raw, _ := os.ReadFile(filepath.Join(dir, e.Task.ID+".json"))
		if e.Rev != ftRev(raw) {
			t.Errorf("List: task %s at revision %d; want %d", e.Task.ID, e.Rev, ftRev(raw))
		}
	}
}

func TestTaskHighWaterMark(t *testing.T) {
	root := t.TempDir()
	s := ftOpen(t, root, file.Options{})
	ctx := t.Context()
	ts := s.Tasks()
	ftCreateTasks(t, s, "hw", 3)
	hwPath := filepath.Join(root, "tasks", "hw", ".highwatermark")
	readHW := func() string {
		b, _ := os.ReadFile(hwPath)
		return string(b)
	}

	_, rev, err := ts.Get(ctx, "hw", "3")
	if err != nil {
		t.Fatal(err)
	}
	if err := ts.Delete(ctx, "hw", "3", rev); err != nil {
		t.Fatalf("Delete(3) = %v", err)
	}
	if got := readHW(); got != "3" {
		t.Errorf(".highwatermark after deleting 3 = %q; want 3", got)
	}
	task, _, err := ts.Create(ctx, "hw", tasklist.Task{Subject: "after delete"})
	if err != nil || task.ID != "4" {
		t.Fatalf("Create after deleting the highest = %q, %v; want id 4 (3 never reused)", task.ID, err)
	}
	if err := tasklist.New(ts, "hw").Delete(ctx, "4"); err != nil {
		t.Fatalf("List.Delete(4) = %v", err)
	}
	if err := tasklist.New(ts, "hw").Delete(ctx, "1"); err != nil {
		t.Fatalf("List.Delete(1) = %v", err)
	}
	if got := readHW(); got != "4" {
		t.Errorf(".highwatermark after deleting 4 then 1 = %q; want 4", got)
	}
	if task, _, err := ts.Create(ctx, "hw", tasklist.Task{Subject: "x"}); err != nil || task.ID != "5" {
		t.Errorf("Create = %q, %v; want id 5", task.ID, err)
	}

	// A watermark written by Claude Code, with no task files left.
	dir := filepath.Join(root, "tasks", "hw40")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".highwatermark"), []byte("40"), 0o644); err != nil {
		t.Fatal(err)
	}
	if task, _, err := ts.Create(ctx, "hw40", tasklist.Task{Subject: "x"}); err != nil || task.ID != "41" {
		t.Errorf("Create with .highwatermark 40 = %q, %v; want id 41", task.ID, err)
	}
}

func TestTaskIDAllocationProcesses(t *testing.T) {
	const procs, each = 4, 25
	root := t.TempDir()
	var children []*ftChild
	for p := range procs {
		c := ftStartChild(t, ftChildSpec{Role: "task-create", Root: root, Name: "ids", Agent: fmt.Sprintf("p%d", p), N: each})
		c.expect(t, "ready")
		children = append(children, c)
	}
	start := time.Now()
	for _, c := range children {
		c.send(t, "go")
	}
	var ids []string
	for _, c := range children {
		for _, line := range c.wait(t) {
			id, ok := strings.CutPrefix(line, "id ")
			if !ok {
				t.Errorf("child: %s", line)
				continue
			}
			ids = append(ids, id)
		}
	}
	t.Logf("%d creates from %d processes in %v", len(ids), procs, time.Since(start))
	slices.SortFunc(ids, func(a, b string) int { return int(tasklist.IDNum(a)) - int(tasklist.IDNum(b)) })
	if want := ftSeq(1, procs*each); !slices.Equal(ids, want) {
		t.Errorf("allocated ids = %v; want 1..%d, each once", ids, procs*each)
	}
	s := ftOpen(t, root, file.Options{})
	entries, err := s.Tasks().List(t.Context(), "ids")
	if err != nil || len(entries) != procs*each {
		t.Errorf("List = %d tasks, %v; want %d", len(entries), err, procs*each)
	}
}

func TestTaskClaimRace(t *testing.T) {
	const rounds, goroutines, procs = 30, 16, 4
	root := t.TempDir()
	s := ftOpen(t, root, file.Options{})
	ctx := t.Context()
	ftCreateTasks(t, s, "race", rounds)
	l := tasklist.New(s.Tasks(), "race")

	var children []*ftChild
	for p := range procs {
		c := ftStartChild(t, ftChildSpec{Role: "task-claim", Root: root, Name: "race", Agent: fmt.Sprintf("p%d", p)})
		c.expect(t, "ready")
		children = append(children, c)
	}
	start := time.Now()
	for r := 1; r <= rounds; r++ {
		id := strconv.Itoa(r)
		for _, c := range children {
			c.send(t, "go "+id)
		}
		results := make(map[string]string) // agent -> outcome
		var mu sync.Mutex
		var wg sync.WaitGroup
		for g := range goroutines {
			agent := fmt.Sprintf("g%d", g)
			wg.Go(func() {
				_, err := l.ClaimTask(ctx, id, agent)
				mu.Lock()
				results[agent] = ftClaimResult(err)
				mu.Unlock()
			})
		}
		wg.Wait()
		for p, c := range children {
			got, outcome, _ := strings.Cut(c.next(t), " ")
			if got != id {
				t.Fatalf("child p%d answered for task %s; want %s", p, got, id)
			}
			results[fmt.Sprintf("p%d", p)] = outcome
		}
		var winners []string
		for agent, outcome := range results {
			switch outcome {
			case "won":
				winners = append(winners, agent)
			case "claimed":
			default:
				t.Errorf("round %d: ClaimTask(%s, %s) = %s; want a win or *ClaimedError", r, id, agent, outcome)
			}
		}
		if len(winners) != 1 {
			t.Fatalf("round %d: winners %v; want exactly one", r, winners)
		}
		task, _, err := s.Tasks().Get(ctx, "race", id)
		if err != nil || task.Owner != winners[0] || task.Status != tasklist.StatusInProgress {
			t.Errorf("round %d: stored task = owner %q status %q, %v; want owner %s, in_progress", r, task.Owner, task.Status, err, winners[0])
		}
	}
	t.Logf("%d rounds of %d claimers in %v", rounds, goroutines+procs, time.Since(start))
}

func TestTaskDrain(t *testing.T) {
	const tasks, goroutines, procs = 50, 4, 4
	root := t.TempDir()
	s := ftOpen(t, root, file.Options{})
	ctx := t.Context()
	ftCreateTasks(t, s, "drain", tasks)

	var children []*ftChild
	for p := range procs {
		c := ftStartChild(t, ftChildSpec{Role: "task-drain", Root: root, Name: "drain", Agent: fmt.Sprintf("p%d", p)})
		c.expect(t, "ready")
		children = append(children, c)
	}
	start := time.Now()
	for _, c := range children {
		c.send(t, "go")
	}
	var (
		mu   sync.Mutex
		done = map[string][]string{} // task id -> agents that completed it
		wg   sync.WaitGroup
	)
	l := tasklist.New(s.Tasks(), "drain")
	for g := range goroutines {
		agent := fmt.Sprintf("g%d", g)
		wg.Go(func() {
			ids := ftDrain(ctx, l, agent, func(err error) { t.Errorf("%s: %v", agent, err) })
			mu.Lock()
			for _, id := range ids {
				done[id] = append(done[id], agent)
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	for p, c := range children {
		for _, line := range c.wait(t) {
			id, ok := strings.CutPrefix(line, "done ")
			if !ok {
				t.Errorf("child p%d: %s", p, line)
				continue
			}
			done[id] = append(done[id], fmt.Sprintf("p%d", p))
		}
	}
	t.Logf("%d tasks drained by %d claimers in %v", tasks, goroutines+procs, time.Since(start))
	entries, err := s.Tasks().List(ctx, "drain")
	if err != nil || len(entries) != tasks {
		t.Fatalf("List = %d, %v; want %d tasks", len(entries), err, tasks)
	}
	for _, e := range entries {
		by := done[e.Task.ID]
		if len(by) != 1 {
			t.Errorf("task %s completed by %v; want exactly one claimer", e.Task.ID, by)
			continue
		}
		if e.Task.Status != tasklist.StatusCompleted || e.Task.Owner != by[0] {
			t.Errorf("task %s: status %q owner %q; want completed by %s", e.Task.ID, e.Task.Status, e.Task.Owner, by[0])
		}
	}
}

// TestTaskTornReadRetried serves a task file through a FIFO so that the
// first read deterministically sees a torn (truncated or empty) file, as a
// reader does while Claude Code rewrites a task in place; the file is then
// complete. Get must return the task, not ErrNotFound or corruption.
func TestTaskTornReadRetried(t *testing.T) {
	mkfifo, err := exec.LookPath("mkfifo")
	if err != nil {
		t.Skip("no mkfifo command")
	}
	tests := []struct {
		name string
		torn func(good []byte) []byte
	}{
		{"truncated", func(good []byte) []byte { return good[:len(good)/2] }},
		{"empty", func([]byte) []byte { return nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			s := ftOpen(t, root, file.Options{})
			ctx := t.Context()
			ftCreateTasks(t, s, "torn", 1)
			path := filepath.Join(root, "tasks", "torn", "1.json")
			good, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			fixed := filepath.Join(root, "fixed.json")
			if err := os.WriteFile(fixed, good, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(mkfifo, path).CombinedOutput(); err != nil {
				t.Skipf("mkfifo: %v %s", err, out)
			}
			served := make(chan error, 1)
			go func() {
				f, err := os.OpenFile(path, os.O_WRONLY, 0) // waits for the reader
				if err != nil {
					served <- err
					return
				}
				_, err = f.Write(tt.torn(good))
				if rerr := os.Rename(fixed, path); err == nil {
					err = rerr
				}
				if cerr := f.Close(); err == nil { // the reader sees EOF now
					err = cerr
				}
				served <- err
			}()
			task, rev, err := s.Tasks().Get(ctx, "torn", "1")
			select {
			case serr := <-served:
				if serr != nil {
					t.Fatalf("serving the torn file: %v", serr)
				}
			default:
				// Get never opened the FIFO: unblock the writer.
				if f, err := os.OpenFile(path, os.O_RDONLY, 0); err == nil {
					f.Close()
				}
				<-served
				t.Fatalf("Get did not read the task file")
			}
			if err != nil || task.Subject != "task 1" || rev != ftRev(good) {
				t.Errorf("Get over a torn then fixed file = %q, %d, %v; want task 1 at %d", task.Subject, rev, err, ftRev(good))
			}
		})
	}
}

// TestTaskTornReadsInPlaceWriter has another process rewrite a task in
// place (truncate, then write in two pieces) under the task's lock, the way
// Claude Code updates task files, while readers Get and List it. No read may
// fail or say the task is missing (R5), however long the writer stalls
// mid-write: a reader that sees a torn file re-reads it under the lock.
func TestTaskTornReadsInPlaceWriter(t *testing.T) {
	root := t.TempDir()
	s := ftOpen(t, root, file.Options{})
	ctx := t.Context()
	big := strings.Repeat("x", 8<<10)
	for range 3 {
		if _, _, err := s.Tasks().Create(ctx, "inplace", tasklist.Task{Subject: "s", Description: big}); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(root, "tasks", "inplace", "2.json")
	writer := ftStartChild(t, ftChildSpec{Role: "rewrite-in-place", Root: root, Name: path, N: 200})
	writer.expect(t, "ready")
	stop := make(chan struct{})
	var (
		wg             sync.WaitGroup
		rounds, rawBad atomic.Int64
	)
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				rounds.Add(1)
				// A naive read, to show how often torn states occur.
				if b, err := os.ReadFile(path); err == nil && !json.Valid(b) {
					rawBad.Add(1)
				}
				if task, _, err := s.Tasks().Get(ctx, "inplace", "2"); err != nil || task.Description != big {
					t.Errorf("Get during in-place rewrites = %v", err)
				}
				if entries, err := s.Tasks().List(ctx, "inplace"); err != nil || len(entries) != 3 {
					t.Errorf("List during in-place rewrites = %d tasks, %v; want 3", len(entries), err)
				}
			}
		})
	}
	writer.send(t, "go")
	out := writer.wait(t)
	close(stop)
	wg.Wait()
	if !slices.Equal(out, []string{"done"}) {
		t.Errorf("writer reported %q", out)
	}
	t.Logf("%d rounds of Get and List all good; naive reads between them saw %d torn files", rounds.Load(), rawBad.Load())
}

func TestTaskCorruptFile(t *testing.T) {
	root := t.TempDir()
	s := ftOpen(t, root, file.Options{})
	ctx := t.Context()
	ftCreateTasks(t, s, "broken", 4)
	path := filepath.Join(root, "tasks", "broken", "2.json")
	if err := os.WriteFile(path, []byte(`{"id": "2", "subject": "ha`), 0o644); err != nil {
		t.Fatal(err)
	}
	entries, err := s.Tasks().List(ctx, "broken")
	var ce *tasklist.CorruptError
	if !errors.As(err, &ce) || ce.Errors["2"] == nil || !strings.Contains(ce.Errors["2"].Error(), path) {
		t.Errorf("List error = %v; want *CorruptError naming %s", err, path)
	}
	if got, want := ftIDs(entries), []string{"1", "3", "4"}; !slices.Equal(got, want) {
		t.Errorf("List ids = %v; want %v alongside the error", got, want)
	}
	if _, _, err := s.Tasks().Get(ctx, "broken", "2"); !errors.Is(err, tasklist.ErrCorrupt) || errors.Is(err, tasklist.ErrNotFound) {
		t.Errorf("Get(2) = %v; want ErrCorrupt", err)
	}
	l := tasklist.New(s.Tasks(), "broken")
	var claimed []string
	for {
		task, err := l.Claim(ctx, "worker")
		if errors.Is(err, tasklist.ErrNoneReady) {
			if !errors.Is(err, tasklist.ErrCorrupt) || !strings.Contains(err.Error(), path) {
				t.Errorf("Claim with none ready and task 2 corrupt = %v; want it to name %s", err, path)
			}
			break
		}
		if err != nil {
			t.Fatalf("Claim = %v", err)
		}
		claimed = append(claimed, task.ID)
	}
	if want := []string{"1", "3", "4"}; !slices.Equal(claimed, want) {
		t.Errorf("claimed %v; want %v", claimed, want)
	}
	if _, err := l.ClaimTask(ctx, "2", "worker"); !errors.Is(err, tasklist.ErrCorrupt) {
		t.Errorf("ClaimTask(2) = %v; want ErrCorrupt", err)
	}
	if raw, _ := os.ReadFile(path); string(raw) != `{"id": "2", "subject": "ha` {
		t.Errorf("the corrupt file was rewritten: %s", raw)
	}
}

// A task whose blocker's file is corrupt stays blocked: nobody can tell
// whether the blocker is finished.
func TestTaskCorruptBlocker(t *testing.T) {
	root := t.TempDir()
	s := ftOpen(t, root, file.Options{})
	ctx := t.Context()
	l := tasklist.New(s.Tasks(), "broken")
	for _, d := range []tasklist.Draft{{Subject: "blocker"}, {Subject: "blocked", BlockedBy: []string{"1"}}} {
		if _, err := l.Create(ctx, d); err != nil {
			t.Fatalf("Create(%q) = %v", d.Subject, err)
		}
	}
	path := filepath.Join(root, "tasks", "broken", "1.json")
	if err := os.WriteFile(path, []byte(`{"id": "1", "status": "compl`), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := l.Claim(ctx, "worker"); !errors.Is(err, tasklist.ErrNoneReady) {
		t.Errorf("Claim = task %q, %v; want ErrNoneReady", got.ID, err)
	}
	var be *tasklist.BlockedError
	_, err := l.ClaimTask(ctx, "2", "worker")
	if !errors.As(err, &be) || !errors.Is(be.Unreadable["1"], tasklist.ErrCorrupt) {
		t.Fatalf("ClaimTask(2) = %v; want a *BlockedError saying 1 is corrupt", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "#1, whose stored form is unreadable") || !strings.Contains(msg, path) {
		t.Errorf("ClaimTask(2) error = %q; want it to name #1 as unreadable and its file %s", msg, path)
	}
	if _, err := l.Update(ctx, "2", tasklist.Update{Status: new(tasklist.StatusCompleted)}); !errors.As(err, &be) {
		t.Errorf("completing 2 = %v; want a *BlockedError", err)
	}
	if got, _, err := s.Tasks().Get(ctx, "broken", "2"); err != nil || got.Status != tasklist.StatusPending || got.Owner != "" {
		t.Errorf("task 2 = {Status %q, Owner %q}, %v; want pending and unowned", got.Status, got.Owner, err)
	}
}

func TestTaskLockExcludes(t *testing.T) {
	root := t.TempDir()
	s := ftOpen(t, root, file.Options{})
	ctx := t.Context()
	dir := filepath.Join(root, "tasks", "locked")
	unlock, err := s.Tasks().Lock(ctx, "locked")
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, ".structure.lock")); err != nil || !fi.IsDir() {
		t.Errorf(".structure.lock while locked: %v; want the lock folder", err)
	}
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if _, err := s.Tasks().Lock(short, "locked"); err == nil {
		t.Errorf("second Lock while locked = nil; want it to wait past the deadline")
	}
	// Create runs under Lock, as tasklist.List.Create does with edges.
	if task, _, err := s.Tasks().Create(ctx, "locked", tasklist.Task{Subject: "x"}); err != nil || task.ID != "1" {
		t.Errorf("Create while Lock is held = %q, %v; want id 1", task.ID, err)
	}
	unlock()
	unlock() // idempotent
	if _, err := os.Stat(filepath.Join(dir, ".structure.lock")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf(".structure.lock after unlock: %v; want it gone", err)
	}

	// Claude Code allocating an id holds .lock.lock: Create waits for it.
	if err := os.Mkdir(filepath.Join(dir, ".lock.lock"), 0o755); err != nil {
		t.Fatal(err)
	}
	short, cancel = context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if task, _, err := s.Tasks().Create(short, "locked", tasklist.Task{Subject: "x"}); err == nil {
		t.Errorf("Create while Claude Code holds the list lock = task %s; want it to wait past the deadline", task.ID)
	}
	if err := os.Remove(filepath.Join(dir, ".lock.lock")); err != nil {
		t.Fatal(err)
	}
	if task, _, err := s.Tasks().Create(ctx, "locked", tasklist.Task{Subject: "x"}); err != nil || task.ID != "2" {
		t.Errorf("Create after the list lock is released = %q, %v; want id 2", task.ID, err)
	}
}

// TestTaskKillDuringPut kills a process while it rewrites a task over and
// over: in half of the trials at a random moment, in the other half as soon
// as its temp file appears (mid-write). The task file must always stay
// valid.
func TestTaskKillDuringPut(t *testing.T) {
	const trials = 20
	root := t.TempDir()
	s := ftOpen(t, root, file.Options{})
	ctx := t.Context()
	ftCreateTasks(t, s, "kill", trials)
	dir := filepath.Join(root, "tasks", "kill")
	var wg sync.WaitGroup
	midWrite := 0
	for i := 1; i <= trials; i++ {
		id := strconv.Itoa(i)
		c := ftStartChild(t, ftChildSpec{Role: "task-put-loop", Root: root, Name: "kill", ID: id, N: 256 << 10})
		c.expect(t, "ready")
		if i%2 == 0 {
			time.Sleep(time.Duration(rand.IntN(60000)) * time.Microsecond) // a random moment within a Put or two
		} else {
			for deadline := time.Now().Add(10 * time.Second); ; {
				if temps, _ := filepath.Glob(filepath.Join(dir, id+".json.tmp.*")); len(temps) > 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("trial %s: no temp file seen within 10s", id)
				}
				time.Sleep(50 * time.Microsecond)
			}
		}
		c.kill9(t)
		if temps, _ := filepath.Glob(filepath.Join(dir, id+".json.tmp.*")); len(temps) > 0 {
			midWrite++
		}
		wg.Go(func() {
			raw, err := os.ReadFile(filepath.Join(dir, id+".json"))
			if err != nil || !json.Valid(raw) {
				t.Errorf("trial %s: task file after kill -9 is invalid (%d bytes, %v)", id, len(raw), err)
				return
			}
			if task, _, err := s.Tasks().Get(ctx, "kill", id); err != nil || task.ID != id {
				t.Errorf("trial %s: Get after kill -9 = %v", id, err)
			}
		})
	}
	wg.Wait()
	t.Logf("%d of %d kills landed while a temp file was being written", midWrite, trials)
}

// TestTaskStaleLockReclaimed kills a process that holds the list lock; the
// lock folder it leaves is reclaimed once stale and the create succeeds.
func TestTaskStaleLockReclaimed(t *testing.T) {
	const stale = 2 * time.Second
	root := t.TempDir()
	c := ftStartChild(t, ftChildSpec{Role: "task-hold-lock", Root: root, Name: "stale", LockStale: stale})
	c.expect(t, "locked")
	c.kill9(t)
	lockDir := filepath.Join(root, "tasks", "stale", ".lock.lock")
	if _, err := os.Stat(lockDir); err != nil {
		t.Fatalf("lock folder after kill -9: %v; want it left behind", err)
	}
	s := ftOpen(t, root, file.Options{LockStale: stale, LockTimeout: 20 * time.Second})
	start := time.Now()
	task, _, err := s.Tasks().Create(t.Context(), "stale", tasklist.Task{Subject: "after the crash"})
	if err != nil || task.ID != "1" {
		t.Fatalf("Create over a dead holder's lock = %q, %v; want id 1", task.ID, err)
	}
	t.Logf("dead holder's lock reclaimed after %v", time.Since(start))
	if _, err := os.Stat(lockDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lock folder after Create: %v; want it released", err)
	}
}

func TestTaskAndTeamAfterClose(t *testing.T) {
	s, err := file.Open(t.TempDir(), file.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ftNewTeam(t, s, "alpha")
	ftCreateTasks(t, s, "alpha", 1)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := s.Teams().Get(ctx, "alpha"); !errors.Is(err, team.ErrClosed) {
		t.Errorf("Teams().Get after Close = %v; want team.ErrClosed", err)
	}
	if _, err := s.Teams().List(ctx); !errors.Is(err, team.ErrClosed) {
		t.Errorf("Teams().List after Close = %v; want team.ErrClosed", err)
	}
	if _, err := s.Tasks().List(ctx, "alpha"); !errors.Is(err, tasklist.ErrClosed) {
		t.Errorf("Tasks().List after Close = %v; want tasklist.ErrClosed", err)
	}
	if _, _, err := s.Tasks().Create(ctx, "alpha", tasklist.Task{Subject: "x"}); !errors.Is(err, tasklist.ErrClosed) {
		t.Errorf("Tasks().Create after Close = %v; want tasklist.ErrClosed", err)
	}
}

// R9 of docs/benchmarks.md: 64 contenders on one task, round after round:
// exactly one winner every time. (troupe bench claim --agents 64 --rounds
// 1000 runs the same with processes.)
func TestTaskClaimRace64(t *testing.T) {
	const rounds, contenders = 20, 64
	s := ftOpen(t, t.TempDir(), file.Options{})
	ctx := t.Context()
	ftCreateTasks(t, s, "r9", rounds)
	l := tasklist.New(s.Tasks(), "r9")
	for r := 1; r <= rounds; r++ {
		id := strconv.Itoa(r)
		var won, claimed, other atomic.Int32
		var wg sync.WaitGroup
		for g := range contenders {
			wg.Go(func() {
				_, err := l.ClaimTask(ctx, id, fmt.Sprintf("a%d", g))
				switch {
				case err == nil:
					won.Add(1)
				case errors.Is(err, tasklist.ErrClaimed):
					claimed.Add(1)
				default:
					other.Add(1)
					t.Errorf("round %d: ClaimTask = %v; want a win or ErrClaimed", r, err)
				}
			})
		}
		wg.Wait()
		if won.Load() != 1 || claimed.Load() != contenders-1 {
			t.Fatalf("round %d: %d winners, %d already-claimed, %d other; want 1, %d, 0", r, won.Load(), claimed.Load(), other.Load(), contenders-1)
		}
	}
}

// A task write whose file is in place but whose folder sync failed
// happened (atomicfile.ErrUnsynced): Create reports the task, and a claim
// reports the claim, instead of an error that would make the caller retry
// (a second task) or go idle with the task owned in its name.
func TestTaskWriteUnsyncedCounts(t *testing.T) {
	s, err := file.Open(t.TempDir(), file.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx := t.Context()
	l := tasklist.New(s.Tasks(), "unsynced")
	fault := func(string) error { return syscall.EIO }
	atomicfile.DirSyncFault.Store(&fault)
	t.Cleanup(func() { atomicfile.DirSyncFault.Store(nil) })
	created, err := l.Create(ctx, tasklist.Draft{Subject: "write the docs"})
	if err != nil {
		t.Fatalf("Create with the folder sync failing = %v; want the task (it is on disk)", err)
	}
	claimed, err := l.Claim(ctx, "alice")
	if err != nil || claimed.ID != created.ID || claimed.Owner != "alice" {
		t.Fatalf("Claim with the folder sync failing = %+v, %v; want task %s claimed by alice", claimed, err, created.ID)
	}
	if _, err := team.Create(ctx, s.Teams(), team.CreateOptions{Name: "unsynced", Now: time.Now(), Pick: func(int) int { return 0 }}); err != nil {
		t.Fatalf("team.Create with the folder sync failing = %v; want the team", err)
	}
	if _, err := team.AddMember(ctx, s.Teams(), "unsynced", team.Member{Name: "alice"}, time.Now()); err != nil {
		t.Fatalf("AddMember with the folder sync failing = %v; want alice added", err)
	}
	atomicfile.DirSyncFault.Store(nil)
	if cfg, err := s.Teams().Get(ctx, "unsynced"); err != nil || len(cfg.Members) != 2 {
		t.Fatalf("team after = %+v, %v; want the lead and alice", cfg, err)
	}
	tasks, err := l.Tasks(ctx)
	if err != nil || len(tasks) != 1 || tasks[0].Owner != "alice" {
		t.Fatalf("tasks after = %+v, %v; want the one task, owned by alice", tasks, err)
	}
}
