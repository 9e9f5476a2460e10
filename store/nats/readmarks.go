package nats

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/troupe-dev/troupe/mailbox"
)

// readMark records one read message of an inbox by its stream sequence.
type readMark struct {
	Seq uint64 `json:"seq"`
	ID  string `json:"id"`
}

// readState is the stored form of an inbox's read marks.
type readState struct {
	Read []readMark `json:"read"`
}

// decodeReadState parses read marks: a JSON object whose "read" array
// holds {seq, id} pairs with positive, strictly increasing sequences and
// non-empty ids. It says what is wrong with anything else.
func decodeReadState(data []byte) ([]readMark, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var st readState
	if err := dec.Decode(&st); err != nil {
		return nil, fmt.Errorf("read marks: %w", err)
	}
	if dec.More() {
		return nil, errors.New("read marks: data after the JSON object")
	}
	var last uint64
	for i, m := range st.Read {
		switch {
		case m.Seq == 0:
			return nil, fmt.Errorf("read marks: entry %d: sequence 0", i)
		case m.Seq <= last:
			return nil, fmt.Errorf("read marks: entry %d: sequence %d after %d, want increasing", i, m.Seq, last)
		case m.ID == "":
			return nil, fmt.Errorf("read marks: entry %d: empty id", i)
		}
		last = m.Seq
	}
	return st.Read, nil
}

// encodeReadState is the inverse of decodeReadState (marks sorted by seq).
func encodeReadState(marks []readMark) []byte {
	if marks == nil {
		marks = []readMark{}
	}
	data, _ := json.Marshal(readState{Read: marks}) // cannot fail
	return data
}

// readMarks returns an inbox's read marks and their KV revision (0 when
// there are none). Undecodable marks are logged and read as none, so the
// inbox shows every message unread rather than failing.
func (s *Store) readMarks(ctx context.Context, teamName, agent string) ([]readMark, uint64, error) {
	e, err := s.mailRead.Get(ctx, readKey(teamName, agent))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	marks, err := decodeReadState(e.Value())
	if err != nil {
		s.log.Warn("nats store: ignoring undecodable read marks", "bucket", s.mailRead.Bucket(), "key", e.Key(), "err", err)
		return nil, e.Revision(), nil
	}
	return marks, e.Revision(), nil
}

// MarkRead marks the messages with the given ids read and returns how many
// changed; absent and already-read ids are ignored. Read messages beyond
// KeepRead, oldest first, are then deleted from the stream.
func (m *Mail) MarkRead(ctx context.Context, teamName, agent string, ids []string) (int, error) {
	s := m.s
	ctx, cancel, err := s.begin(ctx)
	if err != nil {
		return 0, fmt.Errorf("mark read in inbox of %s in team %s: %w", agent, teamName, s.closedAs(err, mailbox.ErrClosed))
	}
	defer cancel()
	// Find each id's stream sequence: the last read of the inbox knows
	// those it returned (readfloor.go); any other takes a direct get.
	inbox := s.inboxSubject(teamName, agent)
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	known := s.floors.take(inbox, ids)
	var found []readMark
	for _, id := range ids {
		if seq, ok := known[id]; ok {
			found = append(found, readMark{Seq: seq, ID: id})
			continue
		}
		msg, err := s.mail.GetLastMsgForSubject(ctx, s.msgSubject(teamName, agent, id))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("mark read in inbox of %s in team %s: find %s: %w", agent, teamName, id, s.closedAs(err, mailbox.ErrClosed))
		}
		found = append(found, readMark{Seq: msg.Sequence, ID: id})
	}
	if len(found) == 0 {
		return 0, nil
	}
	key := readKey(teamName, agent)
	for range maxCAS {
		marks, rev, err := s.readMarks(ctx, teamName, agent)
		if err != nil {
			return 0, fmt.Errorf("mark read in inbox of %s in team %s: %w", agent, teamName, s.closedAs(err, mailbox.ErrClosed))
		}
		n := 0
		for _, f := range found {
			if !slices.ContainsFunc(marks, func(m readMark) bool { return m.Seq == f.Seq }) {
				marks = append(marks, f)
				n++
			}
		}
		if n == 0 {
			return 0, nil
		}
		slices.SortFunc(marks, func(a, b readMark) int { return cmp.Compare(a.Seq, b.Seq) })
		// Prune before recording: a read message deleted here and then
		// lost from the marks by a failed swap is still gone, never
		// shown unread again. Any newer marks also prune it.
		if drop := len(marks) - s.keepRead; drop > 0 {
			for _, v := range marks[:drop] {
				if err := s.mail.DeleteMsg(ctx, v.Seq); err != nil && !alreadyGone(err) {
					return 0, fmt.Errorf("mark read in inbox of %s in team %s: prune: %w", agent, teamName, s.closedAs(err, mailbox.ErrClosed))
				}
			}
			marks = marks[drop:]
		}
		data := encodeReadState(marks)
		if rev == 0 {
			_, err = s.mailRead.Create(ctx, key, data)
		} else {
			_, err = s.mailRead.Update(ctx, key, data, rev)
		}
		if err == nil {
			return n, nil
		}
		if !isConflict(err) {
			return 0, fmt.Errorf("mark read in inbox of %s in team %s: %w", agent, teamName, s.closedAs(err, mailbox.ErrClosed))
		}
	}
	return 0, fmt.Errorf("mark read in inbox of %s in team %s: too much contention", agent, teamName)
}
