// Package tasklist models a team's shared task list: the task record of
// docs/protocol.md section 8, the dependency graph as pure functions (ready set,
// cycle check, who may claim), the Store that persists tasks with
// compare-and-swap, and List, which enforces the list's rules on top of any
// Store.
//
// Store implementations are safe for concurrent use by goroutines and, for
// shared stores, by processes. List is safe for concurrent use; its
// operations are linearizable per task through the Store's compare-and-swap.
package tasklist

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/troupe-dev/troupe/internal/jsonx"
)

// Status is a task's state.
type Status string

// Statuses. StatusDeleted exists only as an update request.
const (
	StatusPending    Status = "pending"
	StatusInProgress Status = "in_progress"
	StatusCompleted  Status = "completed"
	StatusDeleted    Status = "deleted"
)

// Valid reports whether s is a status a stored task may have.
func (s Status) Valid() bool {
	return s == StatusPending || s == StatusInProgress || s == StatusCompleted
}

// MaxTextLen bounds a task's subject, description and active form, in
// bytes: the same cap as a message's text (mailbox.MaxTextLen).
const MaxTextLen = 1 << 20

// CheckText refuses a task whose subject, description, active form or
// owner is not valid UTF-8, with an error matching ErrInvalid that names
// the field: stored as JSON, the bad bytes would be silently replaced by
// U+FFFD. Stores call it before every write. With limit, it also refuses
// fields longer than MaxTextLen (List does, for text it is given; a stored
// task that is already longer can still be claimed and updated).
func CheckText(t Task, limit bool) error {
	for _, f := range []struct{ name, v string }{
		{"subject", t.Subject}, {"description", t.Description}, {"activeForm", t.ActiveForm}, {"owner", t.Owner},
	} {
		if limit && len(f.v) > MaxTextLen {
			return fmt.Errorf("%w: %s: %d bytes, more than the %d allowed", ErrInvalid, f.name, len(f.v), MaxTextLen)
		}
		if !utf8.ValidString(f.v) {
			return fmt.Errorf("%w: %s: not valid UTF-8", ErrInvalid, f.name)
		}
	}
	return nil
}

// Task is one task record.
type Task struct {
	ID          string                     `json:"id"`
	Subject     string                     `json:"subject"`
	Description string                     `json:"description"`
	ActiveForm  string                     `json:"activeForm,omitempty"`
	Owner       string                     `json:"owner,omitempty"`
	Status      Status                     `json:"status"`
	Blocks      []string                   `json:"blocks"`
	BlockedBy   []string                   `json:"blockedBy"`
	Metadata    map[string]json.RawMessage `json:"metadata,omitempty"`

	// Extra keeps keys this type does not model. (Claude Code drops them on
	// its next rewrite; troupe keeps what it reads.)
	Extra jsonx.Extra `json:"-"`
}

var taskKeys = []string{"id", "subject", "description", "activeForm", "owner", "status", "blocks", "blockedBy", "metadata"}

type taskAlias Task

// MarshalJSON encodes t as a task file.
func (t Task) MarshalJSON() ([]byte, error) {
	a := taskAlias(t)
	if a.Blocks == nil {
		a.Blocks = []string{}
	}
	if a.BlockedBy == nil {
		a.BlockedBy = []string{}
	}
	b, err := json.Marshal(a)
	if err != nil {
		return nil, err
	}
	return jsonx.Join(b, t.Extra, taskKeys...)
}

// UnmarshalJSON decodes a task file; the error names a field of the wrong
// type, a missing id, or an unknown status. A missing status reads as
// pending.
func (t *Task) UnmarshalJSON(data []byte) error {
	// Fast path: one pass when the file has no keys we do not model (as
	// every task file Claude Code or troupe writes); else split them off.
	var a taskAlias
	var extra jsonx.Extra
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err := dec.Decode(&a)
	if err == nil && dec.More() {
		err = fmt.Errorf("trailing data after the task object")
	}
	if err != nil && strings.HasPrefix(err.Error(), "json: unknown field") {
		a = taskAlias{}
		if extra, err = jsonx.Split(data, taskKeys...); err != nil {
			return fmt.Errorf("task: %w", err)
		}
		err = json.Unmarshal(data, &a)
	}
	if err != nil {
		var te *json.UnmarshalTypeError
		if asType(err, &te) {
			return fmt.Errorf("task: field %s: want %s, got JSON %s", te.Field, te.Type, te.Value)
		}
		return fmt.Errorf("task: %w", err)
	}
	if a.ID == "" {
		return fmt.Errorf("task: id: missing or empty")
	}
	if a.Status == "" {
		a.Status = StatusPending
	}
	if !a.Status.Valid() {
		return fmt.Errorf("task %s: status: %q is not pending, in_progress or completed", a.ID, a.Status)
	}
	*t = Task(a)
	t.Extra = extra
	return nil
}

// Clone returns a deep copy of t.
func (t Task) Clone() Task {
	c := t
	c.Blocks = append([]string(nil), t.Blocks...)
	c.BlockedBy = append([]string(nil), t.BlockedBy...)
	if t.Metadata != nil {
		c.Metadata = make(map[string]json.RawMessage, len(t.Metadata))
		for k, v := range t.Metadata {
			c.Metadata[k] = append(json.RawMessage(nil), v...)
		}
	}
	c.Extra = t.Extra.Clone()
	return c
}

// ValidID reports whether id is a task id: a positive decimal number.
func ValidID(id string) bool {
	n, err := strconv.ParseUint(id, 10, 63)
	return err == nil && n > 0 && strconv.FormatUint(n, 10) == id
}

// IDNum returns the numeric value of a valid id, or 0.
func IDNum(id string) uint64 {
	n, err := strconv.ParseUint(id, 10, 63)
	if err != nil {
		return 0
	}
	return n
}
