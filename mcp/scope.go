package mcp

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Scopes are where troupe mcp add and remove keep a server, as claude
// mcp's: local is the project's .troupe/settings.local.json, project its
// .mcp.json (shared with Claude Code), user the troupe home's
// settings.json.
var Scopes = []string{"local", "project", "user"}

// ErrBadScope is a scope that is not one of Scopes.
var ErrBadScope = errors.New("unknown MCP scope")

// ScopePath returns the file of a scope for a project in cwd and a troupe
// home; an unknown scope is ErrBadScope.
func ScopePath(scope, cwd, home string) (string, error) {
	switch scope {
	case "local":
		return filepath.Join(cwd, ".troupe", "settings.local.json"), nil
	case "project":
		return filepath.Join(cwd, ".mcp.json"), nil
	case "user":
		return filepath.Join(home, "settings.json"), nil
	}
	return "", fmt.Errorf("%w %q: want one of %s", ErrBadScope, scope, strings.Join(Scopes, ", "))
}

// ScopesOf returns those of scopes whose file configures the server
// called name. A missing file configures none; a malformed one is an
// error naming it.
func ScopesOf(name, cwd, home string, scopes []string) ([]string, error) {
	var found []string
	for _, sc := range scopes {
		path, err := ScopePath(sc, cwd, home)
		if err != nil {
			return nil, err
		}
		servers, err := ReadServers(path)
		if err != nil {
			return nil, err
		}
		if slices.ContainsFunc(servers, func(s Server) bool { return s.Name == name }) {
			found = append(found, sc)
		}
	}
	return found, nil
}

// ReadServers returns the servers of one file; none when it is missing
// or blank.
func ReadServers(path string) ([]Server, error) {
	data, err := readOptional(path)
	if err != nil || data == nil {
		return nil, err
	}
	return Parse(data, path)
}
