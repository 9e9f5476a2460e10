// Package peertool makes every agent a session can reach addressable by
// its model: ListAgents lists them (sub-agents, teammates, the parent,
// other sessions on this machine and over the NATS store), and Wrap puts
// the other sessions' addresses (a unique name, "name [ref]",
// "session:", "uds:" and "bridge:", docs/teams.md "Addressing") on an
// existing SendMessage tool, handing everything else to it unchanged.
//
// Routing is a pure function (Route) over the rows ListAgents shows. The
// tools are safe for concurrent use.
package peertool

import (
	"cmp"
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
)

// The kinds of Row, in the order ListAgents shows them.
const (
	KindSubAgent = "subagent"
	KindTeammate = "teammate"
	KindParent   = "parent"
	KindSession  = "session" // another session on this machine
	KindRemote   = "remote"  // a session on another host
)

var kindOrder = []string{KindParent, KindTeammate, KindSubAgent, KindSession, KindRemote}

// Row is one addressable agent.
type Row struct {
	Name   string
	Ref    string // tells equal names apart: a task id, an agent id, a session's short id
	Kind   string
	State  string
	Folder string
	// To is what a message to this row is sent to: for a session its
	// "session:<id>" address (through Peers), for the others the `to`
	// the wrapped SendMessage understands.
	To string
}

// Source lists rows of one kind.
type Source func(ctx context.Context) ([]Row, error)

// Peers sends to other sessions.
type Peers interface {
	// SendPeer delivers text to the session at addr ("session:<id>",
	// "uds:<path>" or "bridge:<id>") and returns how it was delivered
	// (for the model), or an error the model reads.
	SendPeer(ctx context.Context, addr, text, summary string) (string, error)
}

// sortRows orders rows by kind, name and ref.
func sortRows(rows []Row) {
	slices.SortFunc(rows, func(a, b Row) int {
		return cmp.Or(cmp.Compare(slices.Index(kindOrder, a.Kind), slices.Index(kindOrder, b.Kind)),
			strings.Compare(a.Name, b.Name), strings.Compare(a.Ref, b.Ref))
	})
}

// key is a row's place in the order, the cursor of the page after it.
func key(r Row) string { return base64.RawURLEncoding.EncodeToString([]byte(rawKey(r))) }

// rawKey is a row's sort key: kind rank, name, ref.
func rawKey(r Row) string {
	return fmt.Sprintf("%02d\x00%s\x00%s", slices.Index(kindOrder, r.Kind), r.Name, r.Ref)
}

// Page returns the rows after cursor ("" for the first page), at most
// limit of them, and the cursor of the next page ("" at the end). Rows
// must be sorted (sortRows). A cursor names a place in the order, not an
// offset, so rows that come or go meanwhile shift nothing. It is pure.
func Page(rows []Row, cursor string, limit int) ([]Row, string, error) {
	start := 0
	if cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(cursor)
		if err != nil || !strings.Contains(string(b), "\x00") {
			return nil, "", fmt.Errorf("cursor %q is not one ListAgents gave", cursor)
		}
		after := string(b)
		start = len(rows)
		for i, r := range rows {
			if rawKey(r) > after {
				start = i
				break
			}
		}
	}
	end := min(start+limit, len(rows))
	page := rows[start:end]
	next := ""
	if end < len(rows) && len(page) > 0 {
		next = key(page[len(page)-1])
	}
	return page, next, nil
}

// Decision is where a SendMessage goes.
type Decision struct {
	Peer string // the peer address to send to; "" for the wrapped tool
	To   string // the wrapped tool's `to` (when Peer is "")
	Err  string // a refusal the model reads
}

// Route decides where a message addressed to `to` goes, given the rows
// ListAgents would show. Scheme addresses go to peers; "name [ref]" must
// name one row; a bare name naming one session row goes to it, several
// rows are ambiguous, and anything else is left to the wrapped tool. It
// is pure.
func Route(to string, rows []Row) Decision {
	to = strings.TrimSpace(to)
	for _, s := range []string{"uds:", "bridge:", "session:"} {
		if strings.HasPrefix(to, s) && len(to) > len(s) {
			return Decision{Peer: to}
		}
	}
	name, ref := to, ""
	if strings.HasSuffix(to, "]") {
		if i := strings.LastIndex(to, " ["); i > 0 {
			name, ref = strings.TrimSpace(to[:i]), to[i+2:len(to)-1]
		}
	}
	var hits []Row
	for _, r := range rows {
		if r.Name == name && (ref == "" || r.Ref == ref) {
			hits = append(hits, r)
		}
	}
	switch {
	case len(hits) == 0 && ref != "":
		return Decision{Err: fmt.Sprintf("no agent %q; call ListAgents for the names and refs", to)}
	case len(hits) == 0:
		return Decision{To: to}
	case len(hits) > 1:
		var opts []string
		for _, h := range hits {
			opts = append(opts, fmt.Sprintf("%q (%s)", h.Name+" ["+h.Ref+"]", h.Kind))
		}
		return Decision{Err: fmt.Sprintf("%q names %d agents; address one as `name [ref]`: %s", to, len(hits), strings.Join(opts, ", "))}
	}
	h := hits[0]
	if h.Kind == KindSession || h.Kind == KindRemote {
		return Decision{Peer: h.To}
	}
	return Decision{To: cmp.Or(h.To, h.Name)}
}
