package tasklist

import (
	"context"
	"errors"
	"fmt"
)

// Reset deletes every task of the list, under the list's lock, as a new
// team does with a task list left over from an earlier team of its name.
// The ids of the deleted tasks are not reused (the stores keep the
// highest id ever allocated). It returns how many tasks it deleted; a task
// that cannot be read is left and reported through a *CorruptError.
func (l *List) Reset(ctx context.Context) (int, error) {
	unlock, err := l.store.Lock(ctx, l.name)
	if err != nil {
		return 0, fmt.Errorf("reset task list %s: %w", l.name, err)
	}
	defer unlock()
	entries, listErr := l.store.List(ctx, l.name)
	if listErr != nil && !errors.Is(listErr, ErrCorrupt) {
		return 0, fmt.Errorf("reset task list %s: %w", l.name, listErr)
	}
	n := 0
	for _, e := range entries {
		deleted, err := l.deleteAt(ctx, e.Task.ID, e.Rev)
		if err != nil {
			return n, fmt.Errorf("reset task list %s: delete task %s: %w", l.name, e.Task.ID, err)
		}
		if deleted {
			n++
		}
	}
	if listErr != nil {
		return n, fmt.Errorf("reset task list %s: %w", l.name, listErr)
	}
	return n, nil
}

// deleteAt deletes task id, last seen at rev, re-reading it when a
// concurrent writer changed it; a task already gone is not an error.
func (l *List) deleteAt(ctx context.Context, id string, rev Revision) (bool, error) {
	for range MaxRetries {
		err := l.store.Delete(ctx, l.name, id, rev)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, ErrNotFound):
			return false, nil
		case !errors.Is(err, ErrConflict):
			return false, err
		}
		if _, rev, err = l.store.Get(ctx, l.name, id); errors.Is(err, ErrNotFound) {
			return false, nil
		} else if err != nil {
			return false, err
		}
	}
	return false, fmt.Errorf("%w after %d tries", ErrConflict, MaxRetries)
}
