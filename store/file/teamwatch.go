package file

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/troupe-dev/troupe/team"
)

// Watch returns a channel that receives a coalesced kick soon after the
// team's file is rewritten or removed, by this process or another
// (fsnotify on the team's folder, polling where notifications are not
// available). A kick may be spurious; the reader re-reads. The channel is
// closed when ctx is done or the store is closed. It returns
// team.ErrNotFound if the team does not exist.
func (ts *Teams) Watch(ctx context.Context, name string) (<-chan struct{}, error) {
	if err := ts.begin("watch", name); err != nil {
		return nil, err
	}
	if _, err := os.Stat(ts.configPath(name)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			err = team.ErrNotFound
		}
		return nil, fmt.Errorf("watch team %s: %w", name, err)
	}
	ch, err := ts.s.watchDir(ctx, ts.s.teamDir(name), func(n string) bool { return n == teamFileName })
	if err != nil {
		return nil, fmt.Errorf("watch team %s: %w", name, err)
	}
	return ch, nil
}
