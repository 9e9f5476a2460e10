package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/team"
)

// The team every mailbox scenario writes to, and the one inbox.
const (
	benchTeam  = "bench"
	benchInbox = team.LeadName
)

// DefaultText is the length of a message's text: the peer's workload.
const DefaultText = 300

// mailRun is a fresh store with the bench team.
type mailRun struct {
	stores
	inbox string // the inbox file every writer targets; "" on NATS
}

// newMailRun creates the bench team in a fresh store (the file store at
// dir, or a namespace of the NATS server) and preloads its lead's inbox
// with n messages (read or unread), whose ids are pre-0, pre-1, ... The
// caller closes the run.
func (r *Runner) newMailRun(ctx context.Context, dir string, preload int, preloadRead bool, text int) (run mailRun, err error) {
	s, err := r.openRun(ctx, dir)
	if err != nil {
		return mailRun{}, err
	}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	if _, err := team.Create(ctx, s.teams, team.CreateOptions{Name: benchTeam, Now: time.Now(), Pick: rand.IntN}); err != nil {
		return mailRun{}, fmt.Errorf("create bench team: %w", err)
	}
	run = mailRun{stores: s}
	if s.where.Root == "" {
		if preload > 0 {
			err = sendPreload(ctx, s.mail, preload, preloadRead, text)
		}
		return run, err
	}
	run.inbox = filepath.Join(s.where.Root, "teams", benchTeam, "inboxes", benchInbox+".json")
	if preload > 0 {
		if err := writePreload(run.inbox, preload, preloadRead, text); err != nil {
			return mailRun{}, err
		}
	}
	return run, nil
}

// readInbox returns the ids of the bench inbox, strictly parsed from its
// file on the file store, read through the store on NATS.
func (run mailRun) readInbox(ctx context.Context) (InboxFile, error) {
	if run.inbox != "" {
		return ReadInbox(run.inbox)
	}
	return inboxIDs(ctx, run.mail, benchTeam, benchInbox)
}

// sendPreload sends n messages into the bench inbox, marked read if read:
// the preload of a store without a file to write.
func sendPreload(ctx context.Context, mail mailbox.Store, n int, read bool, text int) error {
	var ids []string
	for i := range n {
		id := preloadID(i)
		d, err := mail.Send(ctx, benchTeam, benchInbox, mailbox.Message{From: "pre", Text: Filler("<"+id+">", text), Summary: "pre " + strconv.Itoa(i), Color: "blue", Timestamp: time.Now()})
		if err != nil {
			return fmt.Errorf("preload inbox: %w", err)
		}
		for _, m := range d {
			ids = append(ids, m.ID)
		}
	}
	if read && len(ids) > 0 {
		if _, err := mail.MarkRead(ctx, benchTeam, benchInbox, ids); err != nil {
			return fmt.Errorf("preload inbox: mark read: %w", err)
		}
	}
	return nil
}

// preloadID returns the id of the i-th preloaded message.
func preloadID(i int) string { return "pre-" + strconv.Itoa(i) }

// writePreload writes an inbox of n messages, indented like Claude Code's.
func writePreload(path string, n int, read bool, text int) error {
	msgs := make([]mailbox.Message, n)
	now := time.Now().UTC().Truncate(time.Millisecond)
	for i := range msgs {
		id := preloadID(i)
		msgs[i] = mailbox.Message{
			ID: mailbox.NewID(), From: "pre", Text: Filler("<"+id+">", text), Summary: "pre " + strconv.Itoa(i),
			Color: "blue", Timestamp: now, Read: read, Type: "message",
		}
	}
	data, err := json.MarshalIndent(msgs, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("preload inbox: %w", err)
	}
	return nil
}

// preloaded returns the send map of n preloaded (acknowledged) messages.
func preloaded(n int) map[string]bool {
	m := make(map[string]bool, n)
	for i := range n {
		m[preloadID(i)] = true
	}
	return m
}
