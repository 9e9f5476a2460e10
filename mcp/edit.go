package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/troupe-dev/troupe/internal/fileedit"
)

// Sentinels of AddServer and RemoveServer.
var (
	ErrExists   = errors.New("MCP server already configured")
	ErrNotFound = errors.New("MCP server not configured")
)

// AddServer adds s to the "mcpServers" of the JSON file at path (a
// settings file or .mcp.json), creating the file if needed. A server of
// the same name is ErrExists. Other keys of the file are kept; the file
// is locked (docs/protocol.md's lock directory) and replaced atomically, and a
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

func editServers(ctx context.Context, path string, edit func(map[string]json.RawMessage) error) error {
	return fileedit.Edit(ctx, path, 0o600, func(data []byte) ([]byte, error) {
		doc := map[string]json.RawMessage{}
		if len(bytes.TrimSpace(data)) > 0 {
			if err := json.Unmarshal(data, &doc); err != nil {
				return nil, fmt.Errorf("%w: %s: not a JSON object: %v (left unchanged)", ErrBadConfig, path, err)
			}
		}
		servers := map[string]json.RawMessage{}
		if raw, ok := doc["mcpServers"]; ok && string(raw) != "null" {
			if err := json.Unmarshal(raw, &servers); err != nil {
				return nil, fmt.Errorf("%w: %s: mcpServers is not an object: %v (left unchanged)", ErrBadConfig, path, err)
			}
		}
		if err := edit(servers); err != nil {
			return nil, err
		}
		var err error
		if doc["mcpServers"], err = json.Marshal(servers); err != nil {
			return nil, err
		}
		out, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return nil, err
		}
		return append(out, '\n'), nil
	})
}
