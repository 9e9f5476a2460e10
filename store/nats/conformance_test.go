package nats_test

import (
	"testing"

	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/mailbox/mailboxtest"
	natsstore "github.com/troupe-dev/troupe/store/nats"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/tasklist/tasklisttest"
	"github.com/troupe-dev/troupe/team"
	"github.com/troupe-dev/troupe/team/teamtest"
)

// One server per suite; each subtest gets a namespace of its own, which is
// a fresh, empty backend.

func TestTeamConformance(t *testing.T) {
	srv := startServer(t, "")
	teamtest.Run(t, func(t *testing.T) (team.Store, mailbox.Store, tasklist.Store) {
		s := srv.open(t, natsstore.Options{})
		return s.Teams(), s.Mail(), s.Tasks()
	})
}

func TestMailboxConformance(t *testing.T) {
	srv := startServer(t, "")
	mailboxtest.Run(t, func(t *testing.T) (team.Store, mailbox.Store) {
		s := srv.open(t, natsstore.Options{KeepRead: mailboxtest.KeepRead})
		return s.Teams(), s.Mail()
	})
}

func TestTasklistConformance(t *testing.T) {
	srv := startServer(t, "")
	tasklisttest.Run(t, func(t *testing.T) tasklist.Store {
		return srv.open(t, natsstore.Options{}).Tasks()
	})
}
