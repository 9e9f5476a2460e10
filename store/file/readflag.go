package file

import "encoding/json"

// readFlag returns the bytes of the value of entry's top-level "read" key
// (nil when there is none; the last one when the key is repeated, as a
// decode into a map keeps), so that a read of the unread messages can pass
// over the read ones without decoding them: an inbox keeps up to KeepRead
// of them. entry must be valid JSON (a parsed inbox's entry). ok is false
// when it cannot tell without decoding: entry is not an object, or one of
// its keys is written with escapes.
func readFlag(entry []byte) (val []byte, ok bool) {
	i := skipSpace(entry, 0)
	if i >= len(entry) || entry[i] != '{' {
		return nil, false
	}
	i = skipSpace(entry, i+1)
	if i < len(entry) && entry[i] == '}' {
		return nil, true
	}
	for {
		if i >= len(entry) || entry[i] != '"' {
			return nil, false
		}
		j := i + 1
		for j < len(entry) && entry[j] != '"' {
			if entry[j] == '\\' {
				return nil, false
			}
			j++
		}
		if j >= len(entry) {
			return nil, false
		}
		key := entry[i+1 : j]
		i = skipSpace(entry, j+1)
		if i >= len(entry) || entry[i] != ':' {
			return nil, false
		}
		i = skipSpace(entry, i+1)
		end := skipValue(entry, i)
		if end <= i {
			return nil, false
		}
		if string(key) == "read" {
			val = entry[i:end]
		}
		i = skipSpace(entry, end)
		switch {
		case i < len(entry) && entry[i] == ',':
			i = skipSpace(entry, i+1)
		case i < len(entry) && entry[i] == '}':
			return val, true
		default:
			return nil, false
		}
	}
}

// skipSpace returns the index of the first byte of b at or after i that is
// not JSON white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the index just past the JSON value that starts at
// b[i], or i when there is none.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); {
			switch b[j] {
			case '"':
				j = skipString(b, j)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
			j++
		}
		return i
	default: // a number, true, false or null
		j := i
		for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
			j++
		}
		return j
	}
}

// skipString returns the index just past the JSON string that starts at
// b[i] (a quote), or i when it does not end.
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return i
}

// splitInbox returns the entries of an inbox file's bytes, as slices of
// them; ok is false when they are not a valid JSON array (torn or
// corrupt).
func splitInbox(data []byte) (entries [][]byte, ok bool) {
	if !json.Valid(data) {
		return nil, false
	}
	return splitArray(data)
}

// splitArray returns the elements of data, a valid JSON array, as slices
// of it; ok is false when data is not one.
func splitArray(data []byte) (elems [][]byte, ok bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return nil, false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return nil, skipSpace(data, i+1) == len(data)
	}
	for {
		end := skipValue(data, i)
		if end <= i {
			return nil, false
		}
		elems = append(elems, data[i:end])
		i = skipSpace(data, end)
		switch {
		case i < len(data) && data[i] == ',':
			i = skipSpace(data, i+1)
		case i < len(data) && data[i] == ']':
			return elems, skipSpace(data, i+1) == len(data)
		default:
			return nil, false
		}
	}
}
