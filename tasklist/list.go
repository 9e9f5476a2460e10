package tasklist

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// MaxRetries bounds compare-and-swap retries of one operation.
const MaxRetries = 1000

// List enforces the task list's rules on a Store: known ids, no cycles,
// symmetric edges, no completion while a blocker is open, and race-free
// claiming. It is safe for concurrent use.
type List struct {
	store Store
	name  string
}

// New returns the list called name in s.
func New(s Store, name string) *List { return &List{store: s, name: name} }

// Name returns the list id.
func (l *List) Name() string { return l.name }

// Draft describes a task to create.
type Draft struct {
	Subject     string
	Description string
	ActiveForm  string
	Owner       string
	Metadata    map[string]json.RawMessage
	Blocks      []string // ids the new task blocks
	BlockedBy   []string // ids that block the new task
}

// Tasks returns every task, normalized (symmetric edges, id order). A
// *CorruptError may come back alongside the readable tasks.
func (l *List) Tasks(ctx context.Context) ([]Task, error) {
	entries, err := l.store.List(ctx, l.name)
	if err != nil && !errors.Is(err, ErrCorrupt) {
		return nil, err
	}
	tasks := make([]Task, len(entries))
	for i, e := range entries {
		tasks[i] = e.Task
	}
	return Normalize(tasks), err
}

// Get returns one task, with its edges normalized.
func (l *List) Get(ctx context.Context, id string) (Task, error) {
	if !ValidID(id) {
		return Task{}, fmt.Errorf("get task %q: %w: ids are positive decimal numbers", id, ErrInvalid)
	}
	tasks, err := l.Tasks(ctx)
	if err != nil && !errors.Is(err, ErrCorrupt) {
		return Task{}, err
	}
	for _, t := range tasks {
		if t.ID == id {
			return t, nil
		}
	}
	if _, _, gerr := l.store.Get(ctx, l.name, id); gerr != nil && !errors.Is(gerr, ErrNotFound) {
		return Task{}, fmt.Errorf("get task %s: %w", id, gerr)
	}
	return Task{}, fmt.Errorf("get task %s: %w", id, ErrNotFound)
}

// Create validates d and stores a new pending task. Its edges must name
// existing tasks and must not close a cycle; both sides of each edge are
// written.
func (l *List) Create(ctx context.Context, d Draft) (Task, error) {
	if strings.TrimSpace(d.Subject) == "" {
		return Task{}, fmt.Errorf("create task: %w: subject is empty", ErrInvalid)
	}
	t := Task{Subject: d.Subject, Description: d.Description, ActiveForm: d.ActiveForm,
		Owner: d.Owner, Status: StatusPending, Metadata: dropNulls(d.Metadata)}
	if err := CheckText(t, true); err != nil {
		return Task{}, fmt.Errorf("create task: %w", err)
	}
	if len(d.Blocks)+len(d.BlockedBy) == 0 {
		created, _, err := l.store.Create(ctx, l.name, t)
		if err != nil {
			return Task{}, fmt.Errorf("create task: %w", err)
		}
		return created, nil
	}
	unlock, err := l.store.Lock(ctx, l.name)
	if err != nil {
		return Task{}, fmt.Errorf("create task: %w", err)
	}
	defer unlock()
	tasks, err := l.Tasks(ctx)
	if err != nil && !errors.Is(err, ErrCorrupt) {
		return Task{}, fmt.Errorf("create task: %w", err)
	}
	if err := checkIDs(tasks, "", d.Blocks, d.BlockedBy); err != nil {
		return Task{}, fmt.Errorf("create task: %w", err)
	}
	// The new task closes a cycle iff something it blocks reaches
	// something that blocks it.
	for _, b := range dedupe(d.Blocks) {
		for _, a := range dedupe(d.BlockedBy) {
			if path := FindCycle(tasks, a, b); path != nil || a == b {
				return Task{}, fmt.Errorf("create task: %w", &CycleError{Path: append(append([]string{"new"}, path...), "new")})
			}
		}
	}
	t.Blocks, t.BlockedBy = dedupe(d.Blocks), dedupe(d.BlockedBy)
	created, _, err := l.store.Create(ctx, l.name, t)
	if err != nil {
		return Task{}, fmt.Errorf("create task: %w", err)
	}
	for _, b := range t.Blocks {
		if _, err := l.modify(ctx, b, func(x *Task) error { x.BlockedBy = addID(x.BlockedBy, created.ID); return nil }); err != nil {
			return created, fmt.Errorf("create task %s: link to %s: %w", created.ID, b, err)
		}
	}
	for _, a := range t.BlockedBy {
		if _, err := l.modify(ctx, a, func(x *Task) error { x.Blocks = addID(x.Blocks, created.ID); return nil }); err != nil {
			return created, fmt.Errorf("create task %s: link to %s: %w", created.ID, a, err)
		}
	}
	return created, nil
}

// Update is a change to one task. Nil fields are left alone.
type Update struct {
	Subject      *string
	Description  *string
	ActiveForm   *string
	Status       *Status // StatusDeleted deletes the task
	Owner        *string // "" clears the owner
	AddBlocks    []string
	AddBlockedBy []string
	Metadata     map[string]json.RawMessage // merged; a JSON null deletes the key
}

// Result describes an applied Update.
type Result struct {
	Task    Task
	Updated []string // names of the fields that changed
	From    Status   // status before, when it changed
	Deleted bool
}

// Update applies u to task id. It refuses unknown ids (the task's and those
// of new edges), cycles, and completion while a blocker is open, with errors
// matching ErrNotFound, ErrCycle and ErrBlocked.
func (l *List) Update(ctx context.Context, id string, u Update) (Result, error) {
	if !ValidID(id) {
		return Result{}, fmt.Errorf("update task %q: %w: ids are positive decimal numbers", id, ErrInvalid)
	}
	if u.Status != nil && *u.Status == StatusDeleted {
		if err := l.Delete(ctx, id); err != nil {
			return Result{}, err
		}
		return Result{Task: Task{ID: id}, Updated: []string{"status"}, Deleted: true}, nil
	}
	if u.Status != nil && !u.Status.Valid() {
		return Result{}, fmt.Errorf("update task %s: %w: status %q is not pending, in_progress, completed or deleted", id, ErrInvalid, *u.Status)
	}
	var check Task
	apply(&check, Update{Subject: u.Subject, Description: u.Description, ActiveForm: u.ActiveForm, Owner: u.Owner})
	if err := CheckText(check, true); err != nil {
		return Result{}, fmt.Errorf("update task %s: %w", id, err)
	}
	structural := len(u.AddBlocks)+len(u.AddBlockedBy) > 0
	if structural {
		unlock, err := l.store.Lock(ctx, l.name)
		if err != nil {
			return Result{}, fmt.Errorf("update task %s: %w", id, err)
		}
		defer unlock()
	}
	tasks, listErr := l.Tasks(ctx)
	if listErr != nil && !errors.Is(listErr, ErrCorrupt) {
		return Result{}, fmt.Errorf("update task %s: %w", id, listErr)
	}
	if !slices.ContainsFunc(tasks, func(t Task) bool { return t.ID == id }) {
		return Result{}, fmt.Errorf("update task %s: %w", id, ErrNotFound)
	}
	if structural {
		if err := checkIDs(tasks, id, u.AddBlocks, u.AddBlockedBy); err != nil {
			return Result{}, fmt.Errorf("update task %s: %w", id, err)
		}
		for _, b := range dedupe(u.AddBlocks) {
			if path := FindCycle(tasks, id, b); path != nil {
				return Result{}, fmt.Errorf("update task %s: %w", id, &CycleError{Path: append(path, b)})
			}
		}
		for _, a := range dedupe(u.AddBlockedBy) {
			if path := FindCycle(tasks, a, id); path != nil {
				return Result{}, fmt.Errorf("update task %s: %w", id, &CycleError{Path: append(path, id)})
			}
		}
		// The two new sets of edges together close a cycle when something
		// the task will block reaches something that will block it.
		for _, b := range dedupe(u.AddBlocks) {
			for _, a := range dedupe(u.AddBlockedBy) {
				if path := FindCycle(tasks, a, b); path != nil || a == b {
					return Result{}, fmt.Errorf("update task %s: %w", id, &CycleError{Path: append(append([]string{id}, path...), id)})
				}
			}
		}
	}
	var res Result
	final, err := l.modify(ctx, id, func(t *Task) error {
		res = Result{}
		if u.Status != nil && *u.Status == StatusCompleted && t.Status != StatusCompleted {
			cur := *t
			cur.BlockedBy = unionIDs(t.BlockedBy, blockersOf(tasks, id), u.AddBlockedBy)
			if open := OpenBlockers(cur, tasks); len(open) > 0 {
				return blockedError(id, open, tasks, listErr)
			}
		}
		res.From = t.Status
		res.Updated = apply(t, u)
		return nil
	})
	if err != nil {
		return Result{}, fmt.Errorf("update task %s: %w", id, err)
	}
	for _, b := range dedupe(u.AddBlocks) {
		if _, err := l.modify(ctx, b, func(x *Task) error { x.BlockedBy = addID(x.BlockedBy, id); return nil }); err != nil {
			return Result{}, fmt.Errorf("update task %s: link to %s: %w", id, b, err)
		}
	}
	for _, a := range dedupe(u.AddBlockedBy) {
		if _, err := l.modify(ctx, a, func(x *Task) error { x.Blocks = addID(x.Blocks, id); return nil }); err != nil {
			return Result{}, fmt.Errorf("update task %s: link to %s: %w", id, a, err)
		}
	}
	if res.From == final.Status {
		res.From = ""
	}
	res.Task = final
	if structural {
		res.Task.Blocks = unionIDs(final.Blocks, u.AddBlocks)
		res.Task.BlockedBy = unionIDs(final.BlockedBy, u.AddBlockedBy)
	}
	return res, nil
}

// apply writes u's plain fields into t and returns the names that changed.
func apply(t *Task, u Update) []string {
	var changed []string
	set := func(name string, dst *string, v *string) {
		if v != nil && *dst != *v {
			*dst = *v
			changed = append(changed, name)
		}
	}
	set("subject", &t.Subject, u.Subject)
	set("description", &t.Description, u.Description)
	set("activeForm", &t.ActiveForm, u.ActiveForm)
	set("owner", &t.Owner, u.Owner)
	if u.Status != nil && t.Status != *u.Status {
		t.Status = *u.Status
		changed = append(changed, "status")
	}
	n := len(t.Blocks) + len(t.BlockedBy)
	t.Blocks = unionIDs(t.Blocks, u.AddBlocks)
	t.BlockedBy = unionIDs(t.BlockedBy, u.AddBlockedBy)
	if len(t.Blocks)+len(t.BlockedBy) != n {
		changed = append(changed, "blocks")
	}
	if len(u.Metadata) > 0 {
		if t.Metadata == nil {
			t.Metadata = map[string]json.RawMessage{}
		}
		for k, v := range u.Metadata {
			if string(v) == "null" {
				delete(t.Metadata, k)
			} else {
				t.Metadata[k] = v
			}
		}
		if len(t.Metadata) == 0 {
			t.Metadata = nil
		}
		changed = append(changed, "metadata")
	}
	return changed
}

// Delete removes task id and strips it from every other task's edges. A
// task that is already gone but still named in edges (a delete that stopped
// before unlinking, or a file removed by hand) is unlinked, and that counts
// as success: until then it blocks the tasks it was blocking.
func (l *List) Delete(ctx context.Context, id string) error {
	unlock, err := l.store.Lock(ctx, l.name)
	if err != nil {
		return fmt.Errorf("delete task %s: %w", id, err)
	}
	defer unlock()
	for range MaxRetries {
		_, rev, err := l.store.Get(ctx, l.name, id)
		if errors.Is(err, ErrNotFound) {
			n, uerr := l.unlink(ctx, id)
			if uerr != nil {
				return fmt.Errorf("delete task %s: %w", id, uerr)
			}
			if n > 0 {
				return nil
			}
		}
		if err != nil {
			return fmt.Errorf("delete task %s: %w", id, err)
		}
		err = l.store.Delete(ctx, l.name, id, rev)
		if errors.Is(err, ErrConflict) {
			continue
		}
		if err != nil {
			return fmt.Errorf("delete task %s: %w", id, err)
		}
		if _, err := l.unlink(ctx, id); err != nil {
			return fmt.Errorf("delete task %s: %w", id, err)
		}
		return nil
	}
	return fmt.Errorf("delete task %s: %w after %d tries", id, ErrConflict, MaxRetries)
}

// unlink strips id from the edges of every task and returns how many tasks
// named it.
func (l *List) unlink(ctx context.Context, id string) (int, error) {
	entries, err := l.store.List(ctx, l.name)
	if err != nil && !errors.Is(err, ErrCorrupt) {
		return 0, fmt.Errorf("unlink: %w", err)
	}
	n := 0
	for _, e := range entries {
		if slices.Contains(e.Task.Blocks, id) || slices.Contains(e.Task.BlockedBy, id) {
			n++
			_, err := l.modify(ctx, e.Task.ID, func(x *Task) error {
				x.Blocks = removeID(x.Blocks, id)
				x.BlockedBy = removeID(x.BlockedBy, id)
				return nil
			})
			if err != nil && !errors.Is(err, ErrNotFound) {
				return n, fmt.Errorf("unlink from %s: %w", e.Task.ID, err)
			}
		}
	}
	return n, nil
}

// Claim atomically takes the first claimable task (pending, unowned, every
// blocker completed) for agent: it becomes in_progress and owned by agent.
// It returns ErrNoneReady when no task is claimable. Among concurrent
// claimers, each task goes to exactly one.
//
// Claimers that race do not queue for one task. One that loses the first
// ready task, or finds it being written by another user (a store that is a
// TryPutter says so with ErrBusy instead of waiting), tries the rest in an
// order rotated by its name, so that racing claimers spread over the ready
// tasks. When every ready task is gone or busy it reads the list again if
// any was gone (its view was stale), and otherwise waits for the first busy
// one, whose writer may leave it claimable (a stale lock, an edit of its
// text).
func (l *List) Claim(ctx context.Context, agent string) (Task, error) {
	if agent == "" {
		return Task{}, fmt.Errorf("claim: %w: empty agent name", ErrInvalid)
	}
	put := l.store.Put
	if tp, ok := l.store.(TryPutter); ok {
		put = tp.TryPut
	}
	for range MaxRetries {
		entries, err := l.store.List(ctx, l.name)
		if err != nil && !errors.Is(err, ErrCorrupt) {
			return Task{}, fmt.Errorf("claim for %s: %w", agent, err)
		}
		tasks := make([]Task, len(entries))
		revs := make(map[string]Revision, len(entries))
		for i, e := range entries {
			tasks[i] = e.Task
			revs[e.Task.ID] = e.Rev
		}
		ready := Ready(Normalize(tasks))
		if len(ready) == 0 {
			if err != nil {
				// A task that does not decode may be the one that would be
				// ready, or block others: say so rather than just "none".
				return Task{}, fmt.Errorf("claim for %s: %w; %w", agent, ErrNoneReady, err)
			}
			return Task{}, fmt.Errorf("claim for %s: %w", agent, ErrNoneReady)
		}
		take := func(put func(context.Context, string, Task, Revision) (Revision, error), r Task) (Task, error) {
			stored := findTask(tasks, r.ID)
			stored.Owner, stored.Status = agent, StatusInProgress
			if _, err := put(ctx, l.name, stored, revs[r.ID]); err != nil {
				if errors.Is(err, ErrConflict) && l.ownClaim(ctx, r.ID, agent) {
					// A store that retried the write after losing the
					// server's answer (NATS across a restart) finds its
					// own first attempt applied: the claim is ours.
					r.Owner, r.Status = agent, StatusInProgress
					return r, nil
				}
				return Task{}, err
			}
			r.Owner, r.Status = agent, StatusInProgress
			return r, nil
		}
		lost := false
		var busy []Task
		for i := 0; i < len(ready); i++ {
			if i == 1 && (lost || len(busy) > 0) {
				ready = append(ready[:1], rotate(ready[1:], spread(agent))...)
			}
			t, err := take(put, ready[i])
			switch {
			case err == nil:
				return t, nil
			case errors.Is(err, ErrBusy):
				busy = append(busy, ready[i])
			case errors.Is(err, ErrConflict) || errors.Is(err, ErrNotFound):
				lost = true
			default:
				return Task{}, fmt.Errorf("claim task %s for %s: %w", ready[i].ID, agent, err)
			}
		}
		if len(busy) > 0 && !lost {
			t, err := take(l.store.Put, busy[0])
			switch {
			case err == nil:
				return t, nil
			case errors.Is(err, ErrConflict) || errors.Is(err, ErrNotFound):
				lost = true
			default:
				return Task{}, fmt.Errorf("claim task %s for %s: %w", busy[0].ID, agent, err)
			}
		}
		if !lost {
			break
		}
		if err := ctx.Err(); err != nil {
			return Task{}, fmt.Errorf("claim for %s: %w", agent, context.Cause(ctx))
		}
	}
	return Task{}, fmt.Errorf("claim for %s: %w", agent, ErrNoneReady)
}

// ownClaim reports whether task id, which was ready (pending, unowned)
// when agent tried to claim it, now stands claimed by agent: a write that
// lost its answer and was applied all the same. Nobody else writes agent
// as an owner of a ready task, so the claim is agent's.
func (l *List) ownClaim(ctx context.Context, id, agent string) bool {
	t, _, err := l.store.Get(ctx, l.name, id)
	return err == nil && t.Owner == agent && t.Status == StatusInProgress
}

// ClaimTask takes task id for agent, with distinct errors for a missing task
// (ErrNotFound), one owned by someone else (*ClaimedError), a completed one
// (ErrCompleted) and a blocked one (*BlockedError). Claiming a task agent
// already owns succeeds.
func (l *List) ClaimTask(ctx context.Context, id, agent string) (Task, error) {
	if agent == "" {
		return Task{}, fmt.Errorf("claim task %s: %w: empty agent name", id, ErrInvalid)
	}
	tasks, listErr := l.Tasks(ctx)
	if listErr != nil && !errors.Is(listErr, ErrCorrupt) {
		return Task{}, fmt.Errorf("claim task %s: %w", id, listErr)
	}
	t, err := l.modify(ctx, id, func(t *Task) error {
		switch {
		case t.Status == StatusCompleted:
			return fmt.Errorf("task %s: %w", id, ErrCompleted)
		case t.Owner != "" && t.Owner != agent:
			return &ClaimedError{ID: id, Owner: t.Owner}
		}
		cur := *t
		cur.BlockedBy = unionIDs(t.BlockedBy, blockersOf(tasks, id))
		if open := OpenBlockers(cur, tasks); len(open) > 0 {
			return blockedError(id, open, tasks, listErr)
		}
		t.Owner, t.Status = agent, StatusInProgress
		return nil
	})
	if err != nil {
		return Task{}, fmt.Errorf("claim task %s for %s: %w", id, agent, err)
	}
	return t, nil
}

// Release returns agent's unfinished tasks to pending with no owner, as
// when agent died or shut down, and returns them.
func (l *List) Release(ctx context.Context, agent string) ([]Task, error) {
	entries, err := l.store.List(ctx, l.name)
	if err != nil && !errors.Is(err, ErrCorrupt) {
		return nil, fmt.Errorf("release tasks of %s: %w", agent, err)
	}
	var out []Task
	for _, e := range entries {
		if e.Task.Owner != agent || e.Task.Status == StatusCompleted {
			continue
		}
		released := false
		t, err := l.modify(ctx, e.Task.ID, func(t *Task) error {
			if t.Owner != agent || t.Status == StatusCompleted {
				released = false
				return nil
			}
			t.Owner, t.Status, released = "", StatusPending, true
			return nil
		})
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return out, fmt.Errorf("release task %s of %s: %w", e.Task.ID, agent, err)
		}
		if released {
			out = append(out, t)
		}
	}
	return out, nil
}

// modify applies fn to task id with compare-and-swap, retrying on conflict.
// fn may be called several times; an error from it aborts.
func (l *List) modify(ctx context.Context, id string, fn func(*Task) error) (Task, error) {
	for range MaxRetries {
		t, rev, err := l.store.Get(ctx, l.name, id)
		if err != nil {
			return Task{}, err
		}
		before, _ := json.Marshal(t)
		if err := fn(&t); err != nil {
			return Task{}, err
		}
		if after, _ := json.Marshal(t); string(after) == string(before) {
			return t, nil
		}
		_, err = l.store.Put(ctx, l.name, t, rev)
		if errors.Is(err, ErrConflict) {
			if cerr := ctx.Err(); cerr != nil {
				return Task{}, context.Cause(ctx)
			}
			continue
		}
		if err != nil {
			return Task{}, err
		}
		return t, nil
	}
	return Task{}, fmt.Errorf("%w after %d tries", ErrConflict, MaxRetries)
}

// spread returns a stable per-agent number.
func spread(agent string) int {
	h := 0
	for i := 0; i < len(agent); i++ {
		h = h*31 + int(agent[i])
	}
	return h & 0x7fffffff
}

// rotate returns ts rotated left by n.
func rotate(ts []Task, n int) []Task {
	if len(ts) == 0 {
		return ts
	}
	n %= len(ts)
	return append(append([]Task(nil), ts[n:]...), ts[:n]...)
}

func checkIDs(tasks []Task, self string, lists ...[]string) error {
	known := make(map[string]bool, len(tasks))
	for _, t := range tasks {
		known[t.ID] = true
	}
	var missing []string
	for _, ids := range lists {
		for _, id := range ids {
			if id == self && self != "" {
				return &CycleError{Path: []string{self, self}}
			}
			if !known[id] {
				missing = append(missing, id)
			}
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: unknown task id(s) %s", ErrNotFound, strings.Join(dedupe(missing), ", "))
	}
	return nil
}

func findTask(tasks []Task, id string) Task {
	for _, t := range tasks {
		if t.ID == id {
			return t.Clone()
		}
	}
	return Task{}
}

// blockedError returns the *BlockedError of task id whose blockers open
// are not known to be completed. tasks is the normalized list and listErr
// the error that listing it returned: a *CorruptError there says why a
// blocker absent from tasks could not be read.
func blockedError(id string, open []string, tasks []Task, listErr error) *BlockedError {
	open = slices.Clone(open)
	sortIDs(open)
	e := &BlockedError{ID: id, Blockers: open}
	var ce *CorruptError
	errors.As(listErr, &ce)
	for _, b := range open {
		if slices.ContainsFunc(tasks, func(t Task) bool { return t.ID == b }) {
			continue
		}
		if e.Unreadable == nil {
			e.Unreadable = map[string]error{}
		}
		if ce != nil && ce.Errors[b] != nil {
			e.Unreadable[b] = fmt.Errorf("%w: %w", ErrCorrupt, ce.Errors[b])
		} else {
			e.Unreadable[b] = fmt.Errorf("task %s: %w", b, ErrNotFound)
		}
	}
	return e
}

// blockersOf returns the ids that block id in a normalized list.
func blockersOf(tasks []Task, id string) []string {
	for _, t := range tasks {
		if t.ID == id {
			return t.BlockedBy
		}
	}
	return nil
}

func dropNulls(m map[string]json.RawMessage) map[string]json.RawMessage {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]json.RawMessage, len(m))
	for k, v := range m {
		if string(v) != "null" {
			out[k] = v
		}
	}
	return out
}

func dedupe(ids []string) []string {
	var out []string
	for _, id := range ids {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

func addID(ids []string, id string) []string {
	if slices.Contains(ids, id) {
		return ids
	}
	return append(ids, id)
}

func removeID(ids []string, id string) []string {
	return slices.DeleteFunc(slices.Clone(ids), func(x string) bool { return x == id })
}

func unionIDs(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		for _, id := range l {
			out = addID(out, id)
		}
	}
	return out
}
