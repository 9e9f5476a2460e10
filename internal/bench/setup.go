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
	"github.com/troupe-dev/troupe/store/file"
	"github.com/troupe-dev/troupe/team"
)

// The team every mailbox scenario writes to, and the one inbox.
const (
	benchTeam  = "bench"
	benchInbox = team.LeadName
)

// DefaultText is the length of a message's text: the peer's workload.
const DefaultText = 300

// mailRun is a fresh store root with the bench team.
type mailRun struct {
	root  string // store root, symlinks resolved
	inbox string // the inbox file every writer targets
}

// newMailRun creates the bench team in a fresh store at dir and preloads
// its lead's inbox with n messages (read or unread), whose ids are pre-0,
// pre-1, ...
func newMailRun(ctx context.Context, dir string, preload int, preloadRead bool, text int) (mailRun, error) {
	s, err := file.Open(dir, file.Options{})
	if err != nil {
		return mailRun{}, err
	}
	defer s.Close()
	if _, err := team.Create(ctx, s.Teams(), team.CreateOptions{Name: benchTeam, Now: time.Now(), Pick: rand.IntN}); err != nil {
		return mailRun{}, fmt.Errorf("create bench team: %w", err)
	}
	run := mailRun{root: s.Root()}
	run.inbox = filepath.Join(run.root, "teams", benchTeam, "inboxes", benchInbox+".json")
	if preload > 0 {
		if err := writePreload(run.inbox, preload, preloadRead, text); err != nil {
			return mailRun{}, err
		}
	}
	return run, nil
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
