package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
)

// Sources say where Load finds servers, lowest precedence first.
type Sources struct {
	// Settings are settings files (user, project, local), each of which
	// may hold "mcpServers" and the project-server approvals
	// enableAllProjectMcpServers, enabledMcpjsonServers and
	// disabledMcpjsonServers.
	Settings []string
	// Project is the project's .mcp.json; its servers run only once
	// approved in a settings file, since a cloned repository must not
	// start programs by itself.
	Project string
	// Flags are the --mcp-config values: a file name or a JSON object.
	Flags []string
	// Strict uses the Flags' servers only (--strict-mcp-config).
	Strict bool
}

// Load reads the configured servers. A missing file is skipped; a
// malformed one is an error naming it. Warnings say which project
// servers were left out for want of approval.
func Load(src Sources) (servers []Server, warnings []string, err error) {
	var layers [][]Server
	var approve struct {
		all               bool
		enabled, disabled []string
	}
	if !src.Strict {
		for _, path := range src.Settings {
			data, err := readOptional(path)
			if err != nil || data == nil {
				if err != nil {
					return nil, nil, err
				}
				continue
			}
			var doc struct {
				All      *bool    `json:"enableAllProjectMcpServers"`
				Enabled  []string `json:"enabledMcpjsonServers"`
				Disabled []string `json:"disabledMcpjsonServers"`
			}
			if err := json.Unmarshal(data, &doc); err != nil {
				return nil, nil, fmt.Errorf("%w: %s: %v", ErrBadConfig, path, err)
			}
			if doc.All != nil {
				approve.all = *doc.All
			}
			approve.enabled = append(approve.enabled, doc.Enabled...)
			approve.disabled = append(approve.disabled, doc.Disabled...)
			l, err := Parse(data, path)
			if err != nil {
				return nil, nil, err
			}
			layers = append(layers, l)
		}
		if src.Project != "" {
			data, err := readOptional(src.Project)
			if err != nil {
				return nil, nil, err
			}
			if data != nil {
				// The project's file comes with the repository: a server in
				// it that troupe cannot read is left out, with a warning,
				// rather than stopping the user's own servers too.
				l, bad, err := parseEach(data, src.Project)
				if err != nil {
					warnings = append(warnings, fmt.Sprintf("%v: no server of it is started", err))
				}
				for _, e := range bad {
					warnings = append(warnings, fmt.Sprintf("%v: not started", e))
				}
				var ok []Server
				for _, s := range l {
					switch {
					case slices.Contains(approve.disabled, s.Name):
					case approve.all || slices.Contains(approve.enabled, s.Name):
						ok = append(ok, s)
					default:
						warnings = append(warnings, fmt.Sprintf("MCP server %q of %s is not started: approve it with \"enabledMcpjsonServers\": [%q] (or \"enableAllProjectMcpServers\": true) in a settings file", s.Name, src.Project, s.Name))
					}
				}
				// The project file sits below the settings: a user's own
				// server of the same name wins.
				layers = append([][]Server{ok}, layers...)
			}
		}
	}
	for _, f := range src.Flags {
		l, err := parseFlag(f)
		if err != nil {
			return nil, nil, err
		}
		layers = append(layers, l)
	}
	return Merge(layers...), warnings, nil
}

// parseFlag reads one --mcp-config value: JSON when it starts with {,
// else a file name.
func parseFlag(v string) ([]Server, error) {
	if t := strings.TrimSpace(v); strings.HasPrefix(t, "{") {
		return Parse([]byte(t), "--mcp-config")
	}
	data, err := os.ReadFile(v)
	if err != nil {
		return nil, fmt.Errorf("%w: --mcp-config %s: %v", ErrBadConfig, v, err)
	}
	return Parse(data, v)
}

// readOptional returns a file's content, nil when it does not exist or
// holds only white space.
func readOptional(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read MCP configuration: %w", err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	return data, nil
}
