package team

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// DecodeReusing decodes data, a team file or entry, as json.Unmarshal into
// a Config does, but decodes only the members that changed: for each
// member, same(i, b) reports whether its bytes b (the i-th element of the
// members array) are those of the member prev.At(i) was decoded from, and
// then prev.At(i) is taken as it is (shared: snapshots are never modified).
// In a team of a thousand a whole decode takes about 16 ms and 56,000
// allocations, and every process of a team decodes the roster after each
// change another process makes. It returns each member's span in data and
// whether it was reused. A file it cannot split plainly (no "members"
// array, a key spelled with escapes or another case, anything unexpected)
// is decoded whole, with spans nil, so the result, and whether it fails,
// is json.Unmarshal's.
func DecodeReusing(data []byte, prev Members, same func(i int, b []byte) bool) (c Config, spans [][2]int, reused []bool, err error) {
	n := 0
	if prev != nil {
		n = prev.Len()
	}
	type decoded struct {
		i int
		m Member
	}
	var fresh []decoded
	c, spans, reused, err = DecodeEach(data, n, same, func(i int, m Member) { fresh = append(fresh, decoded{i, m}) })
	if err != nil || spans == nil {
		return c, spans, reused, err
	}
	c.Members = make([]Member, len(reused))
	for i, r := range reused {
		if r {
			c.Members[i] = *prev.At(i)
		}
	}
	for _, f := range fresh {
		c.Members[f.i] = f.m
	}
	return c, spans, reused, nil
}

// DecodeEach is DecodeReusing for a caller that keeps the members itself,
// without building the roster it would copy every reused member into:
// same is asked of the first prevLen members, and got is called, in
// order, with each member that is not the same, decoded (the caller's to
// keep). c.Members is nil then. A file it cannot split plainly is decoded
// whole as by DecodeReusing: spans and reused nil, every member in
// c.Members, and got not called.
func DecodeEach(data []byte, prevLen int, same func(i int, b []byte) bool, got func(i int, m Member)) (c Config, spans [][2]int, reused []bool, err error) {
	start, end, elems, ok := splitMembers(data)
	if !ok {
		err = json.Unmarshal(data, &c)
		return c, nil, nil, err
	}
	rest := make([]byte, 0, len(data)-(end-start)+2)
	rest = append(append(append(rest, data[:start]...), "[]"...), data[end:]...)
	if err := json.Unmarshal(rest, &c); err != nil {
		return Config{}, nil, nil, err
	}
	c.Members = nil
	reused = make([]bool, len(elems))
	for i, e := range elems {
		b := data[e[0]:e[1]:e[1]]
		if i < prevLen && same(i, b) {
			reused[i] = true
			continue
		}
		var m Member
		if err := json.Unmarshal(b, &m); err != nil {
			return Config{}, nil, nil, fmt.Errorf("team file: members[%d]: %w", i, err)
		}
		got(i, m)
	}
	return c, elems, reused, nil
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
