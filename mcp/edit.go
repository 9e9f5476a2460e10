package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/troupe-dev/troupe/internal/atomicfile"
	"github.com/troupe-dev/troupe/internal/lockfile"
)

// Sentinels of AddServer and RemoveServer.
var (
	ErrExists   = errors.New("MCP server already configured")
	ErrNotFound = errors.New("MCP server not configured")
)

// AddServer adds s to the "mcpServers" of the JSON file at path (a
// settings file or .mcp.json), creating the file if needed. A server of
// the same name is ErrExists. Other keys of the file are kept; the file
// is locked (PROTOCOL.md's lock directory) and replaced atomically, and a
// malformed file is an error that leaves it untouched.
func AddServer(ctx context.Context, path string, s Server) error {
	if err := s.Check(); err != nil {
		return err
	}
	return editServers(ctx, path, func(servers map[string]json.RawMessage) error {
		if _, dup := servers[s.Name]; dup {
			return fmt.Errorf("add MCP server %q to %s: %w", s.Name, path, ErrExists)
		}
		b, err := json.Marshal(s)
		if err != nil {
			return err
		}
		servers[s.Name] = b
		return nil
	})
}

// RemoveServer removes the server called name from the file at path; a
// server that is not there is ErrNotFound.
func RemoveServer(ctx context.Context, path, name string) error {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove MCP server %q from %s: %w", name, path, ErrNotFound)
	}
	return editServers(ctx, path, func(servers map[string]json.RawMessage) error {
		if _, ok := servers[name]; !ok {
			return fmt.Errorf("remove MCP server %q from %s: %w", name, path, ErrNotFound)
		}
		delete(servers, name)
		return nil
	})
}

func editServers(ctx context.Context, path string, edit func(map[string]json.RawMessage) error) (err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("edit %s: %w", path, err)
	}
	lock, err := lockfile.Acquire(ctx, path+".lock", lockfile.Options{})
	if err != nil {
		return fmt.Errorf("edit %s: lock: %w", path, err)
	}
	defer func() {
		if rerr := lock.Release(); rerr != nil && err == nil {
			err = fmt.Errorf("edit %s: unlock: %w", path, rerr)
		}
	}()
	perm := fs.FileMode(0o644)
	doc := map[string]json.RawMessage{}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("edit %s: %w", path, err)
	default:
		if fi, err := os.Stat(path); err == nil {
			perm = fi.Mode().Perm()
		}
		if len(bytes.TrimSpace(data)) > 0 {
			if err := json.Unmarshal(data, &doc); err != nil {
				return fmt.Errorf("%w: %s: not a JSON object: %v (left unchanged)", ErrBadConfig, path, err)
			}
		}
	}
	servers := map[string]json.RawMessage{}
	if raw, ok := doc["mcpServers"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &servers); err != nil {
			return fmt.Errorf("%w: %s: mcpServers is not an object: %v (left unchanged)", ErrBadConfig, path, err)
		}
	}
	if err := edit(servers); err != nil {
		return err
	}
	if doc["mcpServers"], err = json.Marshal(servers); err != nil {
		return err
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(path, append(out, '\n'), perm, atomicfile.Options{BeforeCommit: lock.Verify}); err != nil {
		return fmt.Errorf("edit %s: %w", path, err)
	}
	return nil
}
