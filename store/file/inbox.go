package file

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/troupe-dev/troupe/internal/atomicfile"
	"github.com/troupe-dev/troupe/internal/kick"
	"github.com/troupe-dev/troupe/internal/lockfile"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/team"
)

// inbox is one inbox file as read under its lock, with the changes to make.
type inbox struct {
	data []byte              // current content, a valid JSON array
	id   atomicfile.Identity // the file's identity when it was read

	raws   []json.RawMessage // data split into entries, once parsed
	parsed bool
	dirty  bool // raws changed: data must be rebuilt from them

	movedTo  string // where a corrupt inbox was moved, if it was
	parseErr error
}

// entryInfo is what the store itself needs of an entry; whether it is
// read is entryRead's to say.
type entryInfo struct {
	ID string `json:"msg_id"`
}

// loadLocked reads the inbox. An inbox that is not a valid JSON array is
// moved aside to <inbox>.corrupt-<timestamp> and replaced by an empty one;
// nothing in it is deleted. With trustHint, a file whose identity the
// spool's validity hint names is taken as valid unchecked (this store
// wrote it). The caller holds the inbox lock.
func (m *Mail) loadLocked(teamName, agent, path, spool string, trustHint bool) (*inbox, error) {
	id, err := atomicfile.Stat(path)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &inbox{data: []byte("[]")}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read inbox %s: %w", path, err)
	}
	in := &inbox{data: data, id: id}
	if trustHint {
		if hint, err := os.ReadFile(filepath.Join(spool, validHint)); err == nil && string(hint) == identityKey(id) {
			return in, nil // we wrote this very version, and it was valid
		}
	}
	if perr := checkArray(data); perr != nil {
		moved := fmt.Sprintf("%s.corrupt-%s", path, m.s.now().UTC().Format("20060102T150405.000000000Z"))
		if err := os.Rename(path, moved); err != nil {
			return nil, fmt.Errorf("inbox %s is corrupt (%v) and could not be moved aside: %w", path, perr, err)
		}
		m.s.log.Warn("corrupt inbox moved aside", "team", teamName, "agent", agent, "file", path, "moved_to", moved, "error", perr)
		return &inbox{data: []byte("[]"), movedTo: moved, parseErr: perr}, nil
	}
	return in, nil
}

// checkArray reports whether data is a JSON array, by the rule a read
// splits it with (splitInbox): only JSON's own white space may surround
// it. (bytes.TrimSpace also trims \v, \f and Unicode spaces, which JSON
// refuses: such an inbox passed here, was never read, and a send then
// appended to it.)
func checkArray(data []byte) error {
	t := bytes.Trim(data, " \t\r\n")
	if len(t) == 0 || t[0] != '[' {
		return errors.New("not a JSON array")
	}
	if !json.Valid(data) {
		var v []json.RawMessage
		err := json.Unmarshal(data, &v)
		if err == nil {
			err = errors.New("invalid JSON")
		}
		return err
	}
	return nil
}

// entryRead reports whether entry (a JSON value from a valid inbox) is
// marked read: its top-level "read" key, spelled exactly so, is true. It
// is the one rule of Read, MarkRead and pruning, and Claude Code's own
// (read === true); a decode into a struct would also take "Read" or
// "READ", so pruning deleted entries that every reader showed unread.
func entryRead(entry []byte) bool {
	if v, ok := readFlag(entry); ok {
		return string(v) == "true"
	}
	var obj map[string]json.RawMessage
	return json.Unmarshal(entry, &obj) == nil && string(obj["read"]) == "true"
}

func identityKey(id atomicfile.Identity) string {
	return fmt.Sprintf("%d:%d:%d:%d:%d", id.Dev, id.Ino, id.Size, id.MtimeNs, id.CtimeNs)
}

// parse splits data into entries.
func (in *inbox) parse() error {
	if in.parsed {
		return nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(in.data, &raws); err != nil {
		return fmt.Errorf("parse inbox: %w", err)
	}
	in.raws, in.parsed = raws, true
	return nil
}

// readCount returns an upper bound of the entries marked read, without
// parsing: a "read" key set to true cannot occur inside a JSON string
// (its quotes would be escaped).
func (in *inbox) readCount() int {
	return bytes.Count(in.data, []byte(`"read": true`)) + bytes.Count(in.data, []byte(`"read":true`))
}

// dedupe drops entries whose msg_id the inbox already holds.
func (in *inbox) dedupe(entries [][]byte) [][]byte {
	if err := in.parse(); err != nil {
		return entries
	}
	have := make(map[string]bool, len(in.raws))
	for _, r := range in.raws {
		var e entryInfo
		if json.Unmarshal(r, &e) == nil && e.ID != "" {
			have[e.ID] = true
		}
	}
	var out [][]byte
	for _, b := range entries {
		var e entryInfo
		if json.Unmarshal(b, &e) == nil && e.ID != "" && have[e.ID] {
			continue
		}
		out = append(out, b)
	}
	return out
}

// append adds entries (compact JSON objects) and prunes read entries beyond
// keep.
func (in *inbox) append(entries [][]byte, keep int) error {
	keep = max(keep, 0)
	if !in.dirty && in.readCount() <= keep {
		in.data = appendText(in.data, entries)
		return nil
	}
	if err := in.parse(); err != nil {
		return err
	}
	for _, e := range entries {
		in.raws = append(in.raws, e)
	}
	in.prune(keep)
	in.dirty = true
	return nil
}

// prune drops the oldest read entries beyond keep. Unread entries and
// entries that cannot be decoded are kept.
func (in *inbox) prune(keep int) {
	read := 0
	for _, r := range in.raws {
		if entryRead(r) {
			read++
		}
	}
	drop := read - keep
	if drop <= 0 {
		return
	}
	in.raws = slices.DeleteFunc(in.raws, func(r json.RawMessage) bool {
		if drop == 0 {
			return false
		}
		if entryRead(r) {
			drop--
			return true
		}
		return false
	})
	in.dirty = true
}

// markRead marks the entries with the given ids read and returns how many
// changed.
func (in *inbox) markRead(ids []string) (int, error) {
	if err := in.parse(); err != nil {
		return 0, err
	}
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	n := 0
	for i, r := range in.raws {
		var e entryInfo
		if json.Unmarshal(r, &e) != nil || !want[e.ID] || entryRead(r) {
			continue
		}
		var msg mailbox.Message
		if err := json.Unmarshal(r, &msg); err != nil {
			continue // not an entry we can rewrite; leave it as it is
		}
		msg.Read = true
		b, err := json.Marshal(msg)
		if err != nil {
			return n, err
		}
		in.raws[i] = b
		n++
	}
	if n > 0 {
		in.dirty = true
	}
	return n, nil
}

// bytes returns the file content to commit: 2-space indented like Claude
// Code's own writes.
func (in *inbox) bytes() []byte {
	if !in.dirty {
		return in.data
	}
	var b bytes.Buffer
	b.WriteString("[")
	for i, r := range in.raws {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n  ")
		if err := json.Indent(&b, r, "  ", "  "); err != nil {
			b.Write(r) // unreachable: r came from a valid array
		}
	}
	if len(in.raws) > 0 {
		b.WriteString("\n")
	}
	b.WriteString("]")
	return b.Bytes()
}

// appendText appends entries to a valid JSON array without parsing it.
func appendText(data []byte, entries [][]byte) []byte {
	if len(entries) == 0 {
		return data
	}
	t := bytes.TrimRight(data, " \t\r\n")
	body := bytes.TrimRight(t[:len(t)-1], " \t\r\n") // without the closing ']'
	empty := len(bytes.TrimSpace(body)) == 1         // just '['
	var b bytes.Buffer
	b.Grow(len(body) + len(entries)*512)
	b.Write(body)
	for i, e := range entries {
		if !empty || i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n  ")
		if err := json.Indent(&b, e, "  ", "  "); err != nil {
			b.Write(e)
		}
	}
	b.WriteString("\n]")
	return b.Bytes()
}

// commitLocked writes the inbox atomically, after checking that the lock is
// still ours and the file is the version we read.
func (m *Mail) commitLocked(lk *lockfile.Lock, in *inbox, path, spool string) error {
	data := in.bytes()
	err := atomicfile.WriteFile(path, data, 0o600, atomicfile.Options{BeforeCommit: func() error {
		if err := lk.Verify(); err != nil {
			return err
		}
		if m.s.inboxCommitHook != nil {
			if err := m.s.inboxCommitHook(path); err != nil {
				return err
			}
		}
		now, err := atomicfile.Stat(path)
		if err != nil {
			return err
		}
		if now != in.id {
			return fmt.Errorf("inbox %s changed under the lock: %w", path, lockfile.ErrCompromised)
		}
		return nil
	}})
	if err != nil {
		return err
	}
	if id, err := atomicfile.Stat(path); err == nil {
		_ = os.WriteFile(filepath.Join(spool, validHint), []byte(identityKey(id)), 0o600)
	}
	m.s.sweepTemps(filepath.Dir(path))
	return nil
}

// Read implements mailbox.Store.
func (m *Mail) Read(ctx context.Context, teamName, agent string, unreadOnly bool) ([]mailbox.Message, error) {
	if m.s.isClosed() {
		return nil, mailbox.ErrClosed
	}
	if err := checkAgentName(agent); err != nil {
		return nil, err
	}
	stored, err := m.inboxTeam(ctx, teamName)
	if err != nil {
		return nil, fmt.Errorf("read inbox of %s: %w", agent, err)
	}
	if err := m.s.checkNoLinks(m.spoolDir(stored, agent)); err != nil {
		return nil, fmt.Errorf("read inbox of %s: %w", agent, err)
	}
	path := m.s.inboxPath(stored, agent)
	var entries [][]byte
	for try := 0; ; try++ {
		data, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read inbox %s: %w", path, err)
		}
		var ok bool
		if entries, ok = splitInbox(data); ok {
			break
		}
		if try == 4 {
			// Still invalid: not just a torn write in progress. Read it
			// under the lock, which moves a corrupt inbox aside.
			if data, err = m.readLocked(ctx, stored, agent); err != nil {
				return nil, err
			}
			if entries, ok = splitInbox(data); !ok {
				return nil, fmt.Errorf("read inbox %s: not a JSON array", path)
			}
			break
		}
		// A peer writing in place may be half-way through: look again.
		if err := sleepCtx(ctx, time.Duration(1<<try)*2*time.Millisecond); err != nil {
			return nil, err
		}
	}
	out := make([]mailbox.Message, 0, len(entries))
	for i, r := range entries {
		if unreadOnly {
			// A read entry is passed over without being decoded (an
			// inbox keeps up to KeepRead of them).
			if v, ok := readFlag(r); ok && string(v) == "true" {
				continue
			}
		}
		var obj map[string]json.RawMessage
		json.Unmarshal(r, &obj) // a non-object stays nil and is skipped below
		if unreadOnly && string(obj["read"]) == "true" {
			continue
		}
		if obj == nil {
			m.s.log.Warn("inbox entry skipped", "file", path, "index", i, "error", "not a JSON object")
			continue
		}
		msg, err := mailbox.DecodeEntry(obj)
		if err != nil {
			m.s.log.Warn("inbox entry skipped", "file", path, "index", i, "error", err)
			continue
		}
		out = append(out, msg)
	}
	return out, nil
}

// readLocked reads the inbox under its lock, moving a corrupt inbox aside
// and reporting it as a *mailbox.CorruptError. It checks the file whatever
// the spool's validity hint says: it runs only for a file a read could not
// split, which the hint may vouch for wrongly (an older build let stray
// white space through checkArray and vouched for what it appended).
func (m *Mail) readLocked(ctx context.Context, teamName, agent string) ([]byte, error) {
	path := m.s.inboxPath(teamName, agent)
	lk, err := m.s.lock(ctx, path)
	if err != nil {
		return nil, err
	}
	defer lk.Release()
	in, err := m.loadLocked(teamName, agent, path, m.spoolDir(teamName, agent), false)
	if err != nil {
		return nil, err
	}
	if in.movedTo != "" {
		return nil, &mailbox.CorruptError{Team: teamName, Agent: agent, MovedTo: in.movedTo, Err: in.parseErr}
	}
	return in.data, nil
}

// MarkRead implements mailbox.Store.
func (m *Mail) MarkRead(ctx context.Context, teamName, agent string, ids []string) (int, error) {
	if m.s.isClosed() {
		return 0, mailbox.ErrClosed
	}
	if err := checkAgentName(agent); err != nil {
		return 0, err
	}
	stored, err := m.inboxTeam(ctx, teamName)
	if err != nil {
		return 0, fmt.Errorf("mark read in inbox of %s: %w", agent, err)
	}
	if len(ids) == 0 {
		return 0, nil
	}
	path := m.s.inboxPath(stored, agent)
	if !exists(path) {
		return 0, nil
	}
	spool := m.spoolDir(stored, agent)
	if err := m.s.checkNoLinks(spool); err != nil {
		return 0, fmt.Errorf("mark read in inbox of %s: %w", agent, err)
	}
	if err := os.MkdirAll(spool, 0o700); err != nil {
		return 0, fmt.Errorf("spool: %w", err)
	}
	for attempt := 0; ; attempt++ {
		lk, err := m.s.lock(ctx, path)
		if err != nil {
			return 0, fmt.Errorf("mark read in inbox of %s: %w", agent, err)
		}
		n, err := m.markReadLocked(lk, stored, agent, path, spool, ids)
		lk.Release()
		if errors.Is(err, lockfile.ErrCompromised) && attempt < 10 {
			continue // someone took the lock over: redo on the new version
		}
		if err != nil {
			return 0, fmt.Errorf("mark read in inbox of %s: %w", agent, err)
		}
		return n, nil
	}
}

func (m *Mail) markReadLocked(lk *lockfile.Lock, teamName, agent, path, spool string, ids []string) (int, error) {
	in, err := m.loadLocked(teamName, agent, path, spool, true)
	if err != nil {
		return 0, err
	}
	n, err := in.markRead(ids)
	if err != nil || n == 0 {
		return n, err
	}
	in.prune(max(m.s.opts.KeepRead, 0))
	return n, m.commitLocked(lk, in, path, spool)
}

func (m *Mail) spoolDir(teamName, agent string) string {
	return filepath.Join(m.s.inboxDir(teamName), spoolDirName, team.SanitizePath(agent))
}

// Watch implements mailbox.Store.
func (m *Mail) Watch(ctx context.Context, teamName, agent string) (<-chan struct{}, error) {
	if err := checkAgentName(agent); err != nil {
		return nil, err
	}
	stored, err := m.inboxTeam(ctx, teamName)
	if err != nil {
		return nil, fmt.Errorf("watch inbox of %s: %w", agent, err)
	}
	name := team.SanitizePath(agent) + ".json"
	ch, err := m.s.watchDir(ctx, m.s.inboxDir(stored), func(n string) bool { return n == name })
	if err != nil {
		return nil, fmt.Errorf("watch inbox of %s: %w", agent, err)
	}
	return ch, nil
}

// watchDir returns a channel kicked, coalesced, when an entry of dir that
// match accepts changes; it is closed when ctx is done or the store is
// closed. dir is created if missing. A watch holds no goroutine (a
// thousand idle teammates hold two watches each): the directory watcher
// kicks it directly, and ctx's end or Close closes it.
func (s *Store) watchDir(ctx context.Context, dir string, match func(string) bool) (<-chan struct{}, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	w := kick.New()
	cancel, err := s.watch.SubscribeFunc(dir, match, w.Kick)
	if err != nil {
		return nil, err
	}
	end := func() {
		cancel()
		w.Close()
		s.watchMu.Lock()
		delete(s.watches, w)
		s.watchMu.Unlock()
	}
	s.watchMu.Lock()
	if s.isClosed() {
		s.watchMu.Unlock()
		cancel()
		return nil, mailbox.ErrClosed
	}
	if s.watches == nil {
		s.watches = map[*kick.Signal]func(){}
	}
	s.watches[w] = cancel
	s.watchMu.Unlock()
	stop := context.AfterFunc(ctx, end)
	w.OnClose(stop)
	return w.C(), nil
}

// closeWatches closes every watch (Close).
func (s *Store) closeWatches() {
	s.watchMu.Lock()
	ws := s.watches
	s.watches = nil
	s.watchMu.Unlock()
	for w, cancel := range ws {
		cancel()
		w.Close()
	}
}

// inboxTeam returns the name stored in the team file of team name, for
// the operations on one inbox (Read, MarkRead, Watch): they need the team
// to exist and its stored name (the inbox folder's), not its roster. Once
// this store has a snapshot of the file, of any age, a stat that finds the
// file is all they cost: they used to read and decode the file again after
// every change by another process, and in a team of a thousand on three
// hosts each teammate's flag flip made every other host's next inbox read
// decode a 300 KB roster. Send still checks the recipient against the
// roster (team).
func (m *Mail) inboxTeam(ctx context.Context, name string) (string, error) {
	if err := checkTeamName(name); err != nil {
		return "", err
	}
	ts := m.s.Teams()
	if err := ts.begin("get", name); err != nil {
		return "", err
	}
	path := ts.configPath(name)
	if snap := m.s.teamCache.get(path); snap != nil {
		if _, err := os.Stat(path); err == nil {
			return snap.cfg.Name, nil
		}
	}
	snap, err := m.team(ctx, name)
	if err != nil {
		return "", err
	}
	return snap.cfg.Name, nil
}

// checkAgentName refuses agent names that could not be an inbox file name.
func checkAgentName(agent string) error {
	if agent == "" || len(agent) > team.MaxNameLen || team.SanitizePath(agent) != agent {
		return &team.NameError{Kind: "agent", Name: agent, Reason: "want 1-64 characters of letters, digits, '-' or '_'"}
	}
	return nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
