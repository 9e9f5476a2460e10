package nats

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// DeleteNamespace deletes every stream and bucket of the store's namespace
// that troupe made (teams, inboxes, read marks, task lists, remote jobs and
// workers), then closes the store. It is for a namespace made for one
// purpose, such as a benchmark run; everything in it is lost. Streams of
// the namespace's name pattern that troupe did not make are left alone.
func (s *Store) DeleteNamespace(ctx context.Context) error {
	defer s.Close()
	ctx, cancel, err := s.begin(ctx)
	if err != nil {
		return fmt.Errorf("delete namespace %s: %w", s.opts.Namespace, err)
	}
	defer cancel()
	prefix := s.opts.Namespace + "_v" + schemaVersion + "_"
	var names []string
	lister := s.js.StreamNames(ctx)
	for name := range lister.Name() {
		if strings.HasPrefix(name, prefix) || strings.HasPrefix(name, "KV_"+prefix) {
			names = append(names, name)
		}
	}
	if err := lister.Err(); err != nil && !errors.Is(err, jetstream.ErrEndOfData) {
		return fmt.Errorf("delete namespace %s: list streams: %w", s.opts.Namespace, err)
	}
	var errs []error
	for _, name := range names {
		if _, err := s.checkOurs(ctx, name, "stream "+name); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := s.js.DeleteStream(ctx, name); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
			errs = append(errs, fmt.Errorf("delete stream %s: %w", name, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("delete namespace %s: %w", s.opts.Namespace, err)
	}
	return nil
}
