package settings

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"

	"github.com/troupe-dev/troupe/internal/fileedit"
	"github.com/troupe-dev/troupe/permission"
)

// AddRule appends rule to the behavior's list (permissions.allow, .ask or
// .deny) of the settings file at path, creating the file and its
// directory if needed; a rule already listed is not repeated. Other keys
// are kept (object keys come out sorted). The file is replaced atomically
// under a lock directory (<path>.lock), so that concurrent "allow always"
// answers do not lose each other. A malformed existing file is an error
// and is left untouched.
func AddRule(ctx context.Context, path string, b permission.Behavior, rule string) error {
	return editRule(ctx, path, b, rule, true)
}

// RemoveRule takes rule out of the behavior's list of the settings file
// at path, as AddRule puts it in; it reports ErrNoRule when the file does
// not list it.
func RemoveRule(ctx context.Context, path string, b permission.Behavior, rule string) error {
	return editRule(ctx, path, b, rule, false)
}

// ErrNoRule is RemoveRule's error for a rule the file does not list.
var ErrNoRule = errors.New("the file does not list this rule")

func editRule(ctx context.Context, path string, b permission.Behavior, rule string, add bool) (err error) {
	verb := "add rule to"
	if !add {
		verb = "remove rule from"
	}
	if b != permission.Allow && b != permission.Ask && b != permission.Deny {
		return fmt.Errorf("%s %s: unknown behavior %q", verb, path, b)
	}
	r, err := permission.ParseRule(rule)
	if err != nil {
		return fmt.Errorf("%s %s: %w", verb, path, err)
	}
	if !add {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s %s: %w", verb, path, ErrNoRule)
		}
	}
	return fileedit.Edit(ctx, path, 0o600, func(data []byte) ([]byte, error) {
		out, err := withRule(path, data, string(b), r.String(), add)
		if err == nil && out == nil && !add {
			err = fmt.Errorf("%s %s: %s %w", verb, path, r, ErrNoRule)
		}
		return out, err // nil: already there (add)
	})
}

// withRule returns the file content with rule added to permissions.<key>
// (or, without add, taken out of it), or nil when there is nothing to
// change. It is pure.
func withRule(path string, data []byte, key, rule string, add bool) ([]byte, error) {
	top := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(data)) > 0 {
		// Validate the whole file the way Load does first.
		var doc document
		if err := decode(data, &doc); err != nil {
			return nil, positioned(path, data, err)
		}
		if err := decode(data, &top); err != nil {
			return nil, positioned(path, data, err)
		}
	}
	perms := map[string]json.RawMessage{}
	if raw, ok := top["permissions"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &perms); err != nil {
			return nil, &FileError{Path: path, Key: "permissions", Err: err}
		}
	}
	var list []string
	if raw, ok := perms[key]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, &FileError{Path: path, Key: "permissions." + key, Err: err}
		}
	}
	switch {
	case add && slices.Contains(list, rule), !add && !slices.Contains(list, rule):
		return nil, nil
	case add:
		list = append(list, rule)
	default:
		list = slices.DeleteFunc(list, func(s string) bool { return s == rule })
	}
	var err error
	if perms[key], err = json.Marshal(list); err != nil {
		return nil, err
	}
	if top["permissions"], err = json.Marshal(perms); err != nil {
		return nil, err
	}
	out, err := json.MarshalIndent(top, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}
