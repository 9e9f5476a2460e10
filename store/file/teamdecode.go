package file

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/troupe-dev/troupe/team"
)

// decodeTeamFile decodes a team file as json.Unmarshal into a team.Config
// does, but decodes only the members whose bytes differ from those at the
// same place in prev (the snapshot before): the others are prev's, shared.
// In a team of a thousand a full decode took about 19 ms and 56,000
// allocations, and every host decoded the file after each change another
// host made. It also returns each member's bytes as they lie in data, and
// of those the ones known to be their canonical encoding (equal to prev's
// encoding of the same member; nil for the others), for the next update.
//
// A file it cannot split plainly (no "members" array, a key spelled with
// escapes or another case, anything unexpected) is decoded whole, so the
// result, and whether it fails, is json.Unmarshal's.
func decodeTeamFile(data []byte, prev *teamSnap) (c team.Config, members [][]byte, err error) {
	if prev == nil || len(prev.members) == 0 {
		err = json.Unmarshal(data, &c)
		return c, nil, err
	}
	start, end, elems, ok := splitMembers(data)
	if !ok {
		err = json.Unmarshal(data, &c)
		return c, nil, err
	}
	rest := make([]byte, 0, len(data)-(end-start)+2)
	rest = append(append(append(rest, data[:start]...), "[]"...), data[end:]...)
	if err := json.Unmarshal(rest, &c); err != nil {
		return team.Config{}, nil, err
	}
	c.Members = make([]team.Member, len(elems))
	members = make([][]byte, len(elems))
	for i, e := range elems {
		b := data[e[0]:e[1]:e[1]]
		if i < len(prev.members) && i < len(prev.cfg.Members) && prev.members[i] != nil && bytes.Equal(prev.members[i], b) {
			c.Members[i], members[i] = prev.cfg.Members[i], b
			continue
		}
		if err := json.Unmarshal(b, &c.Members[i]); err != nil {
			return team.Config{}, nil, fmt.Errorf("team file: members[%d]: %w", i, err)
		}
	}
	return c, members, nil
}

// splitMembers finds the value of the top-level key "members" of the JSON
// object data, when it is an array: its span [start, end) and each
// element's span. ok is false when data is not an object of plain keys
// with exactly one "members" array, as far as a structural scan can tell
// (the caller then decodes it whole).
func splitMembers(data []byte) (start, end int, elems [][2]int, ok bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return 0, 0, nil, false
	}
	i = skipSpace(data, i+1)
	found := false
	for i < len(data) && data[i] != '}' {
		ks := i
		ke, good := skipString(data, i)
		if !good {
			return 0, 0, nil, false
		}
		key := data[ks+1 : ke-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			return 0, 0, nil, false // an escaped key might spell members
		}
		i = skipSpace(data, ke)
		if i >= len(data) || data[i] != ':' {
			return 0, 0, nil, false
		}
		i = skipSpace(data, i+1)
		vs := i
		ve, good := skipValue(data, i)
		if !good {
			return 0, 0, nil, false
		}
		switch {
		case string(key) == "members":
			if found || data[vs] != '[' {
				return 0, 0, nil, false
			}
			found = true
			start, end = vs, ve
			if elems, good = splitArray(data, vs, ve); !good {
				return 0, 0, nil, false
			}
		case bytes.EqualFold(key, []byte("members")):
			return 0, 0, nil, false // encoding/json would read it as members too
		}
		i = skipSpace(data, ve)
		if i < len(data) && data[i] == ',' {
			i = skipSpace(data, i+1)
			if i < len(data) && data[i] == '}' {
				return 0, 0, nil, false // a trailing comma
			}
		} else if i >= len(data) || data[i] != '}' {
			return 0, 0, nil, false
		}
	}
	if i >= len(data) || !found {
		return 0, 0, nil, false
	}
	if skipSpace(data, i+1) != len(data) {
		return 0, 0, nil, false
	}
	return start, end, elems, true
}

// splitArray returns the spans of the elements of the array data[s:e].
func splitArray(data []byte, s, e int) ([][2]int, bool) {
	var out [][2]int
	i := skipSpace(data, s+1)
	if i < e && data[i] == ']' {
		return out, i+1 == e
	}
	for i < e {
		ve, good := skipValue(data, i)
		if !good || ve > e {
			return nil, false
		}
		out = append(out, [2]int{i, ve})
		i = skipSpace(data, ve)
		switch {
		case i < e && data[i] == ',':
			i = skipSpace(data, i+1)
		case i < e && data[i] == ']' && i+1 == e:
			return out, true
		default:
			return nil, false
		}
	}
	return nil, false
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the end of the string starting at data[i] ('"').
func skipString(data []byte, i int) (int, bool) {
	if i >= len(data) || data[i] != '"' {
		return 0, false
	}
	for i++; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i + 1, true
		}
	}
	return 0, false
}

// skipValue returns the end of the JSON value starting at data[i]. It
// checks structure only (brackets, strings); the decoder checks the rest.
func skipValue(data []byte, i int) (int, bool) {
	if i >= len(data) {
		return 0, false
	}
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for ; i < len(data); i++ {
			switch data[i] {
			case '"':
				e, ok := skipString(data, i)
				if !ok {
					return 0, false
				}
				i = e - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, true
				}
			}
		}
		return 0, false
	default:
		j := i
		for j < len(data) && !bytes.ContainsRune([]byte(" \t\n\r,}]"), rune(data[j])) {
			j++
		}
		return j, j > i
	}
}
