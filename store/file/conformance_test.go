package file_test

import (
	"testing"

	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/mailbox/mailboxtest"
	"github.com/troupe-dev/troupe/store/file"
	"github.com/troupe-dev/troupe/team"
)

func openConformance(t *testing.T, opts file.Options) *file.Store {
	t.Helper()
	s, err := file.Open(t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestMailboxConformance(t *testing.T) {
	mailboxtest.Run(t, func(t *testing.T) (team.Store, mailbox.Store) {
		s := openConformance(t, file.Options{KeepRead: mailboxtest.KeepRead})
		return s.Teams(), s.Mail()
	})
}

// The same suite with watches that poll, as on file systems without
// change notifications.
func TestMailboxConformancePolling(t *testing.T) {
	mailboxtest.Run(t, func(t *testing.T) (team.Store, mailbox.Store) {
		s := openConformance(t, file.Options{KeepRead: mailboxtest.KeepRead, ForcePoll: true})
		return s.Teams(), s.Mail()
	})
}
