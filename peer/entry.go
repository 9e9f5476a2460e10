// Package peer makes running troupe sessions addressable to each other
// (docs/teams.md, "Addressing"): each session publishes an Entry in a
// Registry (store/file: a JSON file and a Unix socket per session;
// store/nats: a key-value entry kept alive by a heartbeat), and another
// session sends it a Message, on this machine over the session's Unix
// socket (Send, Listen) and across machines over the NATS store.
//
// A Message is untrusted peer input: the receiving session hands it to
// its model at a turn boundary wrapped by Format, with the text made
// inert, and it grants nothing (no permission, no instruction change).
//
// The wire format (frame.go) is a 4-byte big-endian length followed by
// one JSON object of at most MaxFrame bytes; every frame is validated
// before it is acted on, and a refused frame is answered with an error.
// Listen checks the connecting process's uid (SO_PEERCRED on Linux) and
// creates its socket 0600 in a 0700 folder.
//
// Everything here is safe for concurrent use.
package peer

import (
	"context"
	"errors"
	"time"
)

// The kinds of session an Entry describes.
const (
	KindInteractive = "interactive" // troupe in a terminal
	KindPrint       = "print"       // troupe -p
	KindCoordinator = "coordinator" // troupe -p --coordinator (or the setting)
	KindWorker      = "worker"      // troupe worker
)

// The states of a session.
const (
	StateIdle    = "idle"    // waiting for input
	StateWorking = "working" // a turn is under way
)

// Entry is one running session as the registry shows it.
type Entry struct {
	ID      string    `json:"id"`
	Name    string    `json:"name"` // a short label, settable (--name, /rename); never an instruction
	Folder  string    `json:"folder"`
	Host    string    `json:"host"`
	PID     int       `json:"pid"`
	Start   uint64    `json:"pidStart,omitempty"` // the process's start time, to tell a reused pid
	Kind    string    `json:"kind"`
	Started time.Time `json:"started"`
	State   string    `json:"state"`
	// Socket is the session's Unix socket (file store), "" when it has
	// none (a session on another host, or one that refuses peers).
	Socket string `json:"socket,omitempty"`
	// Peers is false when the session refuses messages from other
	// sessions (--no-peer-messages, peerMessages: false).
	Peers   bool      `json:"peerMessages"`
	Updated time.Time `json:"updated"`
}

// Label is the name others address the entry by: its Name, else the
// first 8 characters of its id.
func (e Entry) Label() string {
	if e.Name != "" {
		return e.Name
	}
	return Short(e.ID)
}

// Short returns the first 8 characters of a session id.
func Short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// ErrNotFound is returned for a session that is not (or no longer) in the
// registry.
var ErrNotFound = errors.New("peer: no such session")

// ErrRefused is wrapped by the error of a message the receiving session
// refused (it takes no peer messages, or the frame was invalid).
var ErrRefused = errors.New("peer: message refused")

// Registry keeps the entries of running sessions. List leaves out (and
// may remove) entries whose process is gone. Implementations are safe for
// concurrent use.
type Registry interface {
	Publish(ctx context.Context, e Entry) error
	Remove(ctx context.Context, id string) error
	List(ctx context.Context) ([]Entry, error)
}

// Bridge carries messages to sessions elsewhere (store/nats).
type Bridge interface {
	// SendBridge delivers m to session id; an error wrapping ErrRefused
	// or ErrNotFound when it refuses or is not listening.
	SendBridge(ctx context.Context, id string, m Message) error
	// ServeBridge calls deliver for every message to session id until
	// stop is called; deliver's error is the sender's refusal.
	ServeBridge(id string, deliver func(Message) error) (stop func(), err error)
}
