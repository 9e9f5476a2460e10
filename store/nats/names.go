package nats

import (
	"encoding/base32"
	"fmt"
	"strings"
)

// tokenEncoding encodes names that cannot be used as they are.
var tokenEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// plainToken reports whether name is usable as is, both as a subject token
// and as a KV key segment: non-empty and only [A-Za-z0-9_-].
func plainToken(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// token maps name to one subject token and KV key segment: name itself
// when plainToken, else "=" and its unpadded base32. A plain name never
// starts with "=", so different names never share a token.
func token(name string) string {
	if plainToken(name) {
		return name
	}
	return "=" + tokenEncoding.EncodeToString([]byte(name))
}

// untoken inverts token. It fails, saying why, on anything token cannot
// have produced.
func untoken(tok string) (string, error) {
	if plainToken(tok) {
		return tok, nil
	}
	rest, ok := strings.CutPrefix(tok, "=")
	if !ok {
		return "", fmt.Errorf("token %q: neither a plain name nor =base32", tok)
	}
	b, err := tokenEncoding.DecodeString(rest)
	if err != nil {
		return "", fmt.Errorf("token %q: %w", tok, err)
	}
	name := string(b)
	if plainToken(name) {
		return "", fmt.Errorf("token %q: encodes the plain name %q", tok, name)
	}
	if tokenEncoding.EncodeToString(b) != rest {
		return "", fmt.Errorf("token %q: not in canonical base32", tok)
	}
	return name, nil
}

// inboxSubject returns the subject prefix of agent's inbox in team.
func (s *Store) inboxSubject(teamName, agent string) string {
	return s.mailSubject + "." + token(teamName) + "." + token(agent)
}

// msgSubject returns the subject of message id in an inbox.
func (s *Store) msgSubject(teamName, agent, id string) string {
	return s.inboxSubject(teamName, agent) + "." + token(id)
}

// teamKey returns the KV key of a team file.
func teamKey(teamName string) string { return token(teamName) }

// teamLockKey returns the KV key of a team's lock, in the teams bucket.
func teamLockKey(teamName string) string { return token(teamName) + ".lock" }

// readKey returns the KV key of an inbox's read marks.
func readKey(teamName, agent string) string { return token(teamName) + "." + token(agent) }

// taskKey returns the KV key of task id in list.
func taskKey(list, id string) string { return token(list) + ".t." + id }

// highKey returns the KV key of list's id counter.
func highKey(list string) string { return token(list) + ".high" }

// lockKey returns the KV key of list's lock.
func lockKey(list string) string { return token(list) + ".lock" }
