package tasklist

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. Store implementations return these (wrapped), never
// backend errors.
var (
	ErrNotFound  = errors.New("tasklist: task not found")
	ErrConflict  = errors.New("tasklist: revision conflict")
	ErrClaimed   = errors.New("tasklist: already claimed")
	ErrCompleted = errors.New("tasklist: already completed")
	ErrBlocked   = errors.New("tasklist: blocked by open tasks")
	ErrCycle     = errors.New("tasklist: dependency cycle")
	ErrNoneReady = errors.New("tasklist: no task ready to claim")
	ErrInvalid   = errors.New("tasklist: invalid task")
	ErrCorrupt   = errors.New("tasklist: corrupt task")
	ErrClosed    = errors.New("tasklist: store closed")
	// ErrBusy says another user of the store is writing the task right
	// now; only TryPut returns it.
	ErrBusy = errors.New("tasklist: task busy")
)

// Revision identifies one stored version of a task. Zero means "none".
type Revision uint64

// Entry is a stored task with its revision.
type Entry struct {
	Task Task
	Rev  Revision
}

// Store persists the tasks of many lists, each named by its list id (a team
// name). Implementations are safe for concurrent use; Put and Delete are
// compare-and-swap operations on one task.
type Store interface {
	// Create stores t under a new id, ignoring t.ID: one more than the
	// highest id the list ever used (ids of deleted tasks are never
	// reused). Allocation is race-free across all users of the store.
	Create(ctx context.Context, list string, t Task) (Task, Revision, error)
	// Get returns a task and its revision, or ErrNotFound.
	Get(ctx context.Context, list, id string) (Task, Revision, error)
	// List returns every task of list in id order; an absent list is
	// empty. Tasks that cannot be decoded are left out and reported in a
	// *CorruptError returned alongside the others.
	List(ctx context.Context, list string) ([]Entry, error)
	// Put replaces task t.ID if its current revision is prev, and returns
	// the new revision. It returns ErrConflict if the task changed since
	// prev and ErrNotFound if it no longer exists.
	Put(ctx context.Context, list string, t Task, prev Revision) (Revision, error)
	// Delete removes task id if its current revision is prev (ErrConflict
	// otherwise, ErrNotFound if absent).
	Delete(ctx context.Context, list, id string, prev Revision) error
	// Lock serializes structural changes (new dependency edges, deletes)
	// among all users of list until unlock is called. Plain updates and
	// claims do not take it; they rely on Put's compare-and-swap.
	Lock(ctx context.Context, list string) (unlock func(), err error)
}

// ClaimedError says a task is owned by someone else. It matches ErrClaimed.
type ClaimedError struct{ ID, Owner string }

func (e *ClaimedError) Error() string {
	return fmt.Sprintf("task %s is already claimed by %s", e.ID, e.Owner)
}

// Unwrap returns ErrClaimed.
func (e *ClaimedError) Unwrap() error { return ErrClaimed }

// BlockedError says a task has open blockers. It matches ErrBlocked.
type BlockedError struct {
	ID       string
	Blockers []string // every blocker not known to be completed, in id order
	// Unreadable says why the blockers in it could not be read: an error
	// matching ErrNotFound for a missing one, ErrCorrupt for one whose
	// stored form does not decode. Such a blocker counts as unfinished.
	Unreadable map[string]error
}

func (e *BlockedError) Error() string {
	var open, parts []string
	for _, id := range e.Blockers {
		if _, ok := e.Unreadable[id]; !ok {
			open = append(open, id)
		}
	}
	if len(open) > 0 {
		parts = append(parts, "open task(s) "+strings.Join(open, ", "))
	}
	for _, id := range e.Blockers {
		err, ok := e.Unreadable[id]
		switch {
		case !ok:
		case errors.Is(err, ErrNotFound):
			parts = append(parts, fmt.Sprintf("#%s, which is missing (deleting #%s drops the edge)", id, id))
		default:
			parts = append(parts, fmt.Sprintf("#%s, whose stored form is unreadable: %v", id, err))
		}
	}
	return fmt.Sprintf("task %s is blocked by %s", e.ID, strings.Join(parts, "; and by "))
}

// Unwrap returns ErrBlocked.
func (e *BlockedError) Unwrap() error { return ErrBlocked }

// CycleError says a new dependency would close a cycle. It matches ErrCycle.
type CycleError struct{ Path []string }

func (e *CycleError) Error() string {
	return fmt.Sprintf("dependency cycle: %s", strings.Join(e.Path, " -> "))
}

// Unwrap returns ErrCycle.
func (e *CycleError) Unwrap() error { return ErrCycle }

// CorruptError lists tasks whose stored form could not be decoded. It
// matches ErrCorrupt.
type CorruptError struct {
	List   string
	Errors map[string]error // by task id (or file name)
}

func (e *CorruptError) Error() string {
	var parts []string
	for id, err := range e.Errors {
		parts = append(parts, fmt.Sprintf("%s: %v", id, err))
	}
	return fmt.Sprintf("task list %s: %d unreadable task(s): %s", e.List, len(parts), strings.Join(parts, "; "))
}

// Unwrap returns ErrCorrupt.
func (e *CorruptError) Unwrap() error { return ErrCorrupt }

func asType(err error, target any) bool { return errors.As(err, target) }

// Watcher is implemented by stores that can tell a reader that a list
// changed, so that an idle agent waits for work without polling.
type Watcher interface {
	// Watch returns a channel that receives a coalesced kick soon after a
	// task of list is created, updated or deleted by any user of the
	// store. Kicks may be spurious: the reader re-reads. The channel is
	// closed when ctx is done or the store is closed.
	Watch(ctx context.Context, list string) (<-chan struct{}, error)
}

// TryPutter is implemented by stores whose Put waits while another user
// writes the same task (the file store's per-task locks, which Claude Code
// takes too). List.Claim uses it to pass over a task that someone is
// writing, most likely claiming, instead of queueing behind that writer.
type TryPutter interface {
	// TryPut is Put, except that it does not wait: while another user of
	// the store is writing task t.ID it returns an error matching ErrBusy
	// at once, having changed nothing.
	TryPut(ctx context.Context, list string, t Task, prev Revision) (Revision, error)
}
