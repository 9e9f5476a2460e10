package peer

import "strings"

// The schemes of an Address.
const (
	SchemeUDS     = "uds"     // uds:<socket-path>: a session on this machine
	SchemeBridge  = "bridge"  // bridge:<session-id>: a session over the NATS store
	SchemeSession = "session" // session:<session-id>: either, as the registry says
)

// Address is a SendMessage recipient as written: a scheme and its target,
// or a name with an optional [ref] that tells equal names apart.
type Address struct {
	Scheme string // "" for a name
	Target string // the socket path or session id
	Name   string // without Scheme
	Ref    string // the [ref] after Name, "" when none
}

// ParseAddress reads to ("uds:/path", "bridge:id", "session:id",
// "name", "name [ref]"). It is pure.
func ParseAddress(to string) Address {
	to = strings.TrimSpace(to)
	for _, s := range []string{SchemeUDS, SchemeBridge, SchemeSession} {
		if rest, ok := strings.CutPrefix(to, s+":"); ok && rest != "" {
			return Address{Scheme: s, Target: strings.TrimSpace(rest)}
		}
	}
	if strings.HasSuffix(to, "]") {
		if i := strings.LastIndex(to, " ["); i > 0 {
			return Address{Name: strings.TrimSpace(to[:i]), Ref: to[i+2 : len(to)-1]}
		}
	}
	return Address{Name: to}
}
