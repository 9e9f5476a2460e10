package team

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. Store implementations return these, never backend errors.
var (
	ErrNotFound     = errors.New("team: not found")
	ErrExists       = errors.New("team: already exists")
	ErrMemberExists = errors.New("team: member already exists")
	ErrNoMember     = errors.New("team: no such member")
	ErrActive       = errors.New("team: members still active")
	ErrInvalidName  = errors.New("team: invalid name")
	ErrClosed       = errors.New("team: store closed")
)

// ActiveError is returned by Delete while members other than the lead are
// active. It matches ErrActive.
type ActiveError struct {
	Team  string
	Names []string
}

func (e *ActiveError) Error() string {
	return fmt.Sprintf("team %s: cannot delete while members are active: %s (shut them down first)", e.Team, strings.Join(e.Names, ", "))
}

// Unwrap returns ErrActive.
func (e *ActiveError) Unwrap() error { return ErrActive }

// NameError reports an invalid team or agent name. It matches ErrInvalidName.
type NameError struct {
	Kind   string // "team" or "agent"
	Name   string
	Reason string
}

func (e *NameError) Error() string {
	return fmt.Sprintf("invalid %s name %q: %s", e.Kind, e.Name, e.Reason)
}

// Unwrap returns ErrInvalidName.
func (e *NameError) Unwrap() error { return ErrInvalidName }

func asTypeError(err error, te **json.UnmarshalTypeError) bool { return errors.As(err, te) }
