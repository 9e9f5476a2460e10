// Package jsonx keeps the JSON object keys that a Go struct does not know, so
// that a file written by another program (Claude Code, an older troupe) keeps
// those keys when troupe rewrites it.
//
// The functions are pure and safe for concurrent use.
package jsonx

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Extra holds the keys of a JSON object that its Go type does not model,
// with their raw values.
type Extra map[string]json.RawMessage

// Split decodes data, which must be a JSON object, and returns the keys not
// listed in known, with their values in compact form.
func Split(data []byte, known ...string) (Extra, error) {
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		return nil, err
	}
	if all == nil {
		return nil, fmt.Errorf("want a JSON object, got null")
	}
	// encoding/json matches keys case-insensitively, so a key that differs
	// from a known one only in case would fill the field too; it must not
	// also survive as an extra key and override the field on rewrite.
	for k := range all {
		for _, kn := range known {
			if strings.EqualFold(k, kn) {
				delete(all, k)
				break
			}
		}
	}
	if len(all) == 0 {
		return nil, nil
	}
	e := Extra(all)
	e.Compact()
	return e, nil
}

// Join appends the extra keys to obj, the encoding of a JSON object, after
// its own keys and in sorted order. Keys that obj already has win: an extra
// key never overrides a modelled field.
func Join(obj []byte, extra Extra, known ...string) ([]byte, error) {
	if len(extra) == 0 {
		return obj, nil
	}
	skip := make(map[string]bool, len(known))
	for _, k := range known {
		skip[k] = true
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		if !skip[k] {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return obj, nil
	}
	sort.Strings(keys)
	obj = bytes.TrimSpace(obj)
	if len(obj) < 2 || obj[len(obj)-1] != '}' {
		return nil, fmt.Errorf("jsonx: join: not a JSON object")
	}
	var b bytes.Buffer
	b.Grow(len(obj) + 32*len(keys))
	b.Write(obj[:len(obj)-1])
	empty := bytes.Equal(bytes.TrimSpace(obj[1:len(obj)-1]), nil)
	for i, k := range keys {
		if !empty || i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		v := extra[k]
		if !json.Valid(v) {
			return nil, fmt.Errorf("jsonx: join: key %q holds invalid JSON", k)
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Compact rewrites every value in compact form, so that an extra key reads
// the same whether its file was indented or not.
func (e Extra) Compact() {
	for k, v := range e {
		var b bytes.Buffer
		if err := json.Compact(&b, v); err == nil && b.Len() != len(v) {
			e[k] = b.Bytes()
		}
	}
}

// Clone returns a deep copy of e.
func (e Extra) Clone() Extra {
	if e == nil {
		return nil
	}
	c := make(Extra, len(e))
	for k, v := range e {
		c[k] = append(json.RawMessage(nil), v...)
	}
	return c
}
