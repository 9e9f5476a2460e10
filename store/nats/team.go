package nats

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/troupe-dev/troupe/team"
)

// tombstone is the value of a team entry whose delete is under way. It is
// not JSON, so no reader mistakes it for a team file.
var tombstone = []byte("troupe:deleting\n")

// maxCAS bounds compare-and-swap retries of one operation.
const maxCAS = 1000

// isConflict reports whether err is a failed compare-and-swap.
// On a replicated stream the server reports a lost compare-and-swap as
// "wrong last sequence" with an error code nats.go does not translate into
// ErrKeyExists (isWrongSequence): it is a conflict all the same, which
// callers retry, not a failure (a team update from three hosts on a
// cluster failed on it).
func isConflict(err error) bool {
	return errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) || isWrongSequence(err)
}

// Create stores a new team. It returns team.ErrExists if the name is taken
// and a *team.NameError if the name is not canonical. Messages left in the
// name's inboxes by an earlier team of that name are purged.
func (t *Teams) Create(ctx context.Context, c team.Config) error {
	if err := checkTeamName(c.Name); err != nil {
		return fmt.Errorf("create team: %w", err)
	}
	data, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("create team %s: %w", c.Name, err)
	}
	s := t.s
	ctx, cancel, err := s.begin(ctx)
	if err != nil {
		return fmt.Errorf("create team %s: %w", c.Name, s.closedAs(err, team.ErrClosed))
	}
	defer cancel()
	for range maxCAS {
		info, err := s.mail.Info(ctx)
		if err != nil {
			return fmt.Errorf("create team %s: %w", c.Name, s.closedAs(err, team.ErrClosed))
		}
		before := info.State.LastSeq
		_, err = s.teams.Create(ctx, teamKey(c.Name), data)
		if err == nil {
			// Only messages stored before the team existed are purged.
			if err := s.mail.Purge(ctx, jetstream.WithPurgeSubject(s.mailSubject+"."+token(c.Name)+".>"), jetstream.WithPurgeSequence(before+1)); err != nil {
				s.log.Warn("nats store: purge old inboxes of a new team", "team", c.Name, "err", err)
			}
			return nil
		}
		if !isConflict(err) {
			return fmt.Errorf("create team %s: %w", c.Name, s.closedAs(err, team.ErrClosed))
		}
		// Read from the leader: a replica may not show the entry yet. (A
		// retried create that finds its own first attempt landed succeeds
		// in retryKV.Create: equal bytes alone do not tell a create from
		// another caller's of the very same team.)
		e, err := s.leaderGet(ctx, s.teams, teamKey(c.Name))
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue // deleted meanwhile
		}
		if err != nil {
			return fmt.Errorf("create team %s: %w", c.Name, s.closedAs(err, team.ErrClosed))
		}
		if !bytes.Equal(e.Value(), tombstone) {
			return fmt.Errorf("create team %s: %w", c.Name, team.ErrExists)
		}
		if err := s.finishDelete(ctx, c.Name, e.Revision()); err != nil {
			return fmt.Errorf("create team %s: finish the earlier delete: %w", c.Name, err)
		}
	}
	return fmt.Errorf("create team %s: too much contention", c.Name)
}

// Get returns the team called name, or team.ErrNotFound.
func (t *Teams) Get(ctx context.Context, name string) (team.Config, error) {
	s := t.s
	ctx, cancel, err := s.begin(ctx)
	if err != nil {
		return team.Config{}, fmt.Errorf("get team %s: %w", name, s.closedAs(err, team.ErrClosed))
	}
	defer cancel()
	c, _, err := t.get(ctx, name)
	return c, err
}

// get returns the team and its revision.
func (t *Teams) get(ctx context.Context, name string) (team.Config, uint64, error) {
	d, err := t.current(ctx, name)
	if err != nil {
		return team.Config{}, d.rev, err
	}
	return d.cfg.Clone(), d.rev, nil
}

// current returns the decoding of team name's entry as a replica has it
// (shared with the cache: read only). When the store has decoded the
// entry before, it asks only whether the entry changed since
// (kvChangedSince: a few bytes each way, where a Get moves the whole
// roster, 300 KB at a thousand members, through the server for every
// message sent); otherwise, or when it changed, it reads the entry.
func (t *Teams) current(ctx context.Context, name string) (decodedTeam, error) {
	s := t.s
	if d, ok := s.decoded.last(name); ok {
		if changed, err := s.kvChangedSince(ctx, s.teams, teamKey(name), d.rev); err == nil && !changed {
			return d, nil
		}
		// Changed, or the check failed: the Get below reports what is
		// wrong with the server, retried as every Get is.
	}
	return t.read(ctx, name, s.teams.Get)
}

// getWith is get reading the entry with read (a replica's answer, or the
// leader's: locked.go).
func (t *Teams) getWith(ctx context.Context, name string, read func(context.Context, string) (jetstream.KeyValueEntry, error)) (team.Config, uint64, error) {
	d, err := t.read(ctx, name, read)
	if err != nil {
		return team.Config{}, d.rev, err
	}
	return d.cfg.Clone(), d.rev, nil
}

// read reads team name's entry with read and decodes it, reusing the last
// decoding's members that did not change (teamDecodes). A tombstone is
// team.ErrNotFound with its revision.
func (t *Teams) read(ctx context.Context, name string, read func(context.Context, string) (jetstream.KeyValueEntry, error)) (decodedTeam, error) {
	s := t.s
	e, err := read(ctx, teamKey(name))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return decodedTeam{}, fmt.Errorf("get team %s: %w", name, team.ErrNotFound)
	}
	if err != nil {
		return decodedTeam{}, fmt.Errorf("get team %s: %w", name, s.closedAs(err, team.ErrClosed))
	}
	if bytes.Equal(e.Value(), tombstone) {
		return decodedTeam{rev: e.Revision()}, fmt.Errorf("get team %s: %w (being deleted)", name, team.ErrNotFound)
	}
	if d, ok := s.decoded.get(name, e.Value(), e.Revision()); ok {
		return d, nil
	}
	d, err := s.decoded.decode(name, e.Value(), e.Revision())
	if err != nil {
		return decodedTeam{}, fmt.Errorf("get team %s: bucket %s key %s: %w", name, s.teams.Bucket(), e.Key(), err)
	}
	return d, nil
}

// names returns the names on team name's roster, lead first (shared: read
// only), without copying the roster.
func (t *Teams) names(ctx context.Context, name string) ([]string, error) {
	d, err := t.current(ctx, name)
	return d.names, err
}

var _ team.Editor = (*Teams)(nil)

// Edit applies e to team teamName (team.Editor): members added and flags
// flipped by this store's callers while one update is being written are
// written together in the next update (internal/editbatch), so that the
// teammates of one process going idle at once take the team's lock a few
// times, not once each, and a spawn's add carries the flips asked for
// meanwhile.
func (t *Teams) Edit(ctx context.Context, teamName string, e team.Edit) (team.Member, error) {
	if err := checkTeamName(teamName); err != nil {
		return team.Member{}, fmt.Errorf("update team: %w", err)
	}
	return t.s.edits.Edit(ctx, t.Update, teamName, e)
}

// teamDecodes keeps the last decoded value of each team entry: every
// mailbox operation checks its team's roster, and decoding the roster of a
// thousand members on each was most of a host's CPU. An entry is reused
// for the very same bytes; after a change, its members whose bytes did not
// change are (team.DecodeReusing: every process of a team decoded the
// whole roster after each change another process made).
type teamDecodes struct {
	mu    sync.Mutex
	teams map[string]decodedTeam // guarded by mu
}

type decodedTeam struct {
	raw   []byte
	rev   uint64      // the entry's revision when raw was last read or written
	cfg   team.Config // never handed out: callers get clones
	names []string    // cfg's member names, in order
	spans [][2]int    // each member's bytes in raw; nil when unknown
}

// decode decodes raw, the entry of team name at revision rev, reusing the
// members of the last decoding whose bytes did not change, and keeps it.
func (d *teamDecodes) decode(name string, raw []byte, rev uint64) (decodedTeam, error) {
	d.mu.Lock()
	prev := d.teams[name]
	d.mu.Unlock()
	c, spans, _, err := team.DecodeReusing(raw, team.MemberList(prev.cfg.Members), func(i int, b []byte) bool {
		return i < len(prev.spans) && bytes.Equal(prev.raw[prev.spans[i][0]:prev.spans[i][1]], b)
	})
	if err != nil {
		return decodedTeam{}, err
	}
	return d.putSpans(name, raw, rev, c, spans), nil
}

// get returns the decoding of raw, read at revision rev, if it is the last
// one seen for team name.
func (d *teamDecodes) get(name string, raw []byte, rev uint64) (decodedTeam, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	e, ok := d.teams[name]
	if !ok || !bytes.Equal(e.raw, raw) {
		return decodedTeam{}, false
	}
	if rev > e.rev {
		e.rev = rev // the same bytes written again
		d.teams[name] = e
	}
	return e, true
}

// last returns the last decoding kept for team name.
func (d *teamDecodes) last(name string) (decodedTeam, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	e, ok := d.teams[name]
	return e, ok && e.rev > 0
}

// put keeps c as the decoding of raw, which this store encoded from it and
// wrote at revision rev: each member's bytes are found in raw (all reused
// from c), for the next decode.
func (d *teamDecodes) put(name string, raw []byte, rev uint64, c team.Config) {
	_, spans, _, err := team.DecodeReusing(raw, team.MemberList(c.Members), func(int, []byte) bool { return true })
	if err != nil {
		spans = nil
	}
	d.putSpans(name, raw, rev, c, spans)
}

func (d *teamDecodes) putSpans(name string, raw []byte, rev uint64, c team.Config, spans [][2]int) decodedTeam {
	e := decodedTeam{raw: bytes.Clone(raw), rev: rev, cfg: c.Clone(), names: c.Names(), spans: spans}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.teams == nil {
		d.teams = map[string]decodedTeam{}
	}
	if old, ok := d.teams[name]; ok && old.rev > rev {
		return e // a newer revision is kept already (a concurrent read)
	}
	d.teams[name] = e
	return e
}

// List returns every team, sorted by name. Entries that cannot be decoded
// are left out and reported in the returned error, alongside the others.
func (t *Teams) List(ctx context.Context) ([]team.Config, error) {
	s := t.s
	ctx, cancel, err := s.begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("list teams: %w", s.closedAs(err, team.ErrClosed))
	}
	defer cancel()
	entries, err := s.scanKV(ctx, s.teams, "*") // team keys are one token; locks are two
	if err != nil {
		return nil, fmt.Errorf("list teams: %w", s.closedAs(err, team.ErrClosed))
	}
	var out []team.Config
	var bad []error
	for _, e := range entries {
		if bytes.Equal(e.Value(), tombstone) {
			continue
		}
		var c team.Config
		if err := json.Unmarshal(e.Value(), &c); err != nil {
			bad = append(bad, fmt.Errorf("team entry %s: %w", e.Key(), err))
			continue
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b team.Config) int { return strings.Compare(a.Name, b.Name) })
	if len(bad) > 0 {
		return out, fmt.Errorf("list teams: %w", errors.Join(bad...))
	}
	return out, nil
}

// scanKV returns the current entries of kv whose keys match filter, by one
// direct get (kvscan.go) or one pass of a watcher, without delete markers.
// On a cluster the replica that answers may still be applying the newest
// writes (a rolling restart saw a claimed task listed without its owner):
// the leader's newest entry among the keys must be in the scan, or the
// scan starts over.
func (s *Store) scanKV(ctx context.Context, kv jetstream.KeyValue, filter string) (out []jetstream.KeyValueEntry, err error) {
	// A scan that the connection's loss cut short starts over (see retry).
	err = s.retry(ctx, "scan "+kv.Bucket()+" "+filter, 0, func(ctx context.Context, _ int) error {
		last, err := s.leaderNewest(ctx, "KV_"+kv.Bucket(), "$KV."+kv.Bucket()+"."+filter)
		if err != nil {
			return err
		}
		var newest uint64
		out, newest, err = s.scanKVDirect(ctx, kv, filter)
		if errors.Is(err, errNoDirect) {
			out, newest, err = scanOnce(ctx, kv, filter)
		}
		if err == nil && newest < last {
			return fmt.Errorf("scan %s behind the stream leader (revision %d, scan saw %d): %w", filter, last, newest, errStalled)
		}
		return err
	})
	return out, err
}

// scanOnce returns the entries of one pass, without delete markers, and
// the newest revision it saw, delete markers included.
func scanOnce(ctx context.Context, kv jetstream.KeyValue, filter string) ([]jetstream.KeyValueEntry, uint64, error) {
	// A scan whose consumer stops delivering (its server died while this
	// client stayed connected to another one) is a stalled attempt, ended
	// after attemptTimeout without progress.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var got int
	stall := time.AfterFunc(attemptTimeout, func() { cancel(errStalled) })
	defer stall.Stop()
	w, err := kv.Watch(ctx, filter)
	if err != nil {
		if errors.Is(context.Cause(ctx), errStalled) {
			return nil, 0, fmt.Errorf("scan %s: %w", filter, errStalled)
		}
		return nil, 0, err
	}
	defer w.Stop()
	var out []jetstream.KeyValueEntry
	var newest uint64
	for {
		select {
		case e, ok := <-w.Updates():
			if !ok {
				return nil, 0, errors.New("watcher stopped")
			}
			if e == nil {
				return out, newest, nil
			}
			newest = max(newest, e.Revision())
			if e.Operation() == jetstream.KeyValuePut {
				out = append(out, e)
			}
			got++
			stall.Reset(attemptTimeout)
		case <-ctx.Done():
			if errors.Is(context.Cause(ctx), errStalled) {
				return nil, 0, fmt.Errorf("scan %s: %w after %d entries", filter, errStalled, got)
			}
			return nil, 0, context.Cause(ctx)
		}
	}
}

// Update applies fn to the stored team while holding the team's lock (a
// KV entry, so it excludes other processes too) and stores the result with
// compare-and-swap. fn's error is returned as is and leaves the team
// unchanged. fn runs again, on the leader's copy, when the entry was read
// from a replica that had not yet applied an earlier holder's write
// (conflictUnderLock). It returns team.ErrNotFound if the team does not
// exist.
func (t *Teams) Update(ctx context.Context, name string, fn func(*team.Config) error) (team.Config, error) {
	s := t.s
	// The lock wait is bounded by ctx only: a busy team is waited for.
	l, err := s.takeLock(ctx, s.teams, teamLockKey(name))
	if err != nil {
		return team.Config{}, fmt.Errorf("update team %s: %w", name, s.closedAs(err, team.ErrClosed))
	}
	defer l.unlock()
	ctx, cancel, err := s.begin(ctx)
	if err != nil {
		return team.Config{}, fmt.Errorf("update team %s: %w", name, s.closedAs(err, team.ErrClosed))
	}
	defer cancel()
	get := t.get
	fromLeader := func(ctx context.Context, name string) (team.Config, uint64, error) {
		return t.getWith(ctx, name, func(ctx context.Context, key string) (jetstream.KeyValueEntry, error) {
			return s.leaderGet(ctx, s.teams, key)
		})
	}
	for try := 1; ; try++ {
		c, rev, err := get(ctx, name)
		if err != nil {
			return team.Config{}, err
		}
		if err := fn(&c); err != nil {
			// fn's refusal (no such member, nothing to change) may come
			// from a replica behind the leader, and writes nothing that
			// could conflict: on a cluster it stands only if the leader
			// has the revision fn saw.
			if try == 1 && s.nc.ConnectedClusterName() != "" {
				if e, lerr := s.leaderGet(ctx, s.teams, teamKey(name)); lerr == nil && e.Revision() != rev {
					get = fromLeader
					continue
				}
			}
			return team.Config{}, err
		}
		if c.Name != name {
			return team.Config{}, fmt.Errorf("update team %s: the name cannot change (to %q)", name, c.Name)
		}
		data, err := json.Marshal(c)
		if err != nil {
			return team.Config{}, fmt.Errorf("update team %s: %w", name, err)
		}
		wrote, err := s.teams.Update(ctx, teamKey(name), data, rev)
		if isConflict(err) {
			wrote, err = s.conflictUnderLock(ctx, s.teams, l, teamKey(name), data, rev, err)
			if errors.Is(err, errReadBehind) && try < 3 {
				get = fromLeader
				continue
			}
		}
		if err != nil {
			return team.Config{}, fmt.Errorf("update team %s: %w", name, s.closedAs(err, team.ErrClosed))
		}
		s.decoded.put(name, data, wrote, c) // the next read of these bytes needs no decode
		return c.Clone(), nil
	}
}

// Delete removes the team, its inboxes, their read marks and the task list
// named after it, once check accepts the current team; check runs while
// the team's lock is held and its error is returned as is. It returns
// team.ErrNotFound if the team does not exist.
func (t *Teams) Delete(ctx context.Context, name string, check func(team.Config) error) error {
	s := t.s
	l, err := s.takeLock(ctx, s.teams, teamLockKey(name))
	if err != nil {
		return fmt.Errorf("delete team %s: %w", name, s.closedAs(err, team.ErrClosed))
	}
	defer l.unlock()
	ctx, cancel, err := s.begin(ctx)
	if err != nil {
		return fmt.Errorf("delete team %s: %w", name, s.closedAs(err, team.ErrClosed))
	}
	defer cancel()
	// Read from the leader: a replica may not have the last holder's
	// write yet (locked.go); deletes are rare enough to pay for it.
	c, rev, err := t.getWith(ctx, name, func(ctx context.Context, key string) (jetstream.KeyValueEntry, error) {
		return s.leaderGet(ctx, s.teams, key)
	})
	if errors.Is(err, team.ErrNotFound) && rev != 0 {
		// A tombstone: an earlier delete was cut short.
		if err := s.finishDelete(ctx, name, rev); err != nil {
			return fmt.Errorf("delete team %s: %w", name, err)
		}
		return fmt.Errorf("delete team %s: %w", name, team.ErrNotFound)
	}
	if err != nil {
		return err
	}
	if check != nil {
		if err := check(c); err != nil {
			return err
		}
	}
	trev, err := s.teams.Update(ctx, teamKey(name), tombstone, rev)
	if isConflict(err) {
		trev, err = s.conflictUnderLock(ctx, s.teams, l, teamKey(name), tombstone, rev, err)
	}
	if err != nil {
		return fmt.Errorf("delete team %s: %w", name, s.closedAs(err, team.ErrClosed))
	}
	if err := s.finishDelete(ctx, name, trev); err != nil {
		return fmt.Errorf("delete team %s: %w", name, s.closedAs(err, team.ErrClosed))
	}
	return nil
}

// finishDelete purges what belongs to the team whose entry is the
// tombstone at revision rev, then removes the tombstone.
func (s *Store) finishDelete(ctx context.Context, name string, rev uint64) error {
	if err := s.mail.Purge(ctx, jetstream.WithPurgeSubject(s.mailSubject+"."+token(name)+".>")); err != nil {
		return fmt.Errorf("purge inboxes: %w", err)
	}
	if err := s.mailReadStream.Purge(ctx, jetstream.WithPurgeSubject(kvSubject(s.mailRead, token(name)+".>"))); err != nil {
		return fmt.Errorf("purge read marks: %w", err)
	}
	if err := s.tasksStream.Purge(ctx, jetstream.WithPurgeSubject(kvSubject(s.tasks, token(name)+".>"))); err != nil {
		return fmt.Errorf("purge task list: %w", err)
	}
	err := s.teams.Purge(ctx, teamKey(name), jetstream.LastRevision(rev))
	if err != nil && !isConflict(err) { // a conflict: someone else finished it
		return fmt.Errorf("remove team entry: %w", err)
	}
	return nil
}

// kvSubject returns the stream subject of the keys of kv matching key.
func kvSubject(kv jetstream.KeyValue, key string) string {
	return "$KV." + kv.Bucket() + "." + key
}

// checkTeamName refuses names that are not canonical team names.
func checkTeamName(name string) error {
	if err := team.ValidateTeamName(name); err != nil {
		return err
	}
	if team.Sanitize(name) != name {
		return &team.NameError{Kind: "team", Name: name, Reason: fmt.Sprintf("not canonical (stored teams are named %q)", team.Sanitize(name))}
	}
	return nil
}
