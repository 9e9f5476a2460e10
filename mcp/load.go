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
	// approved in a local or the user's settings file, since a cloned
	// repository must not start programs by itself.
	Project string
	// Flags are the --mcp-config values: a file name or a JSON object.
	Flags []string
	// Strict uses the Flags' servers only (--strict-mcp-config).
	Strict bool
	// NoApprovals are files among Settings whose project-server approvals
	// (enableAllProjectMcpServers, enabledMcpjsonServers) do not count:
	// the project's committed settings, which come with the repository.
	// Only the user's and the local settings approve.
	NoApprovals []string
	// Untrusted are files among Settings in a folder the user has not
	// trusted (settings.Trust): none of their servers starts (Check
	// lists them as not trusted) and their approvals do not count.
	Untrusted []string
	// ProjectUntrusted says Project is in a folder the user has not
	// trusted: none of its servers starts, approved or not.
	ProjectUntrusted bool
}

// StateUntrusted is the state of a server Check did not start because
// its folder is not trusted.
const StateUntrusted State = "not started: folder not trusted (troupe trust)"

// Load reads the configured servers. A missing file is skipped; a
// malformed one is an error naming it. Warnings say which project
// servers were left out for want of approval or trust.
func Load(src Sources) (servers []Server, warnings []string, err error) {
	servers, _, warnings, err = load(src)
	return servers, warnings, err
}

// load is Load that also returns the servers held back because their
// folder is not trusted.
func load(src Sources) (servers, held []Server, warnings []string, err error) {
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
					return nil, nil, nil, err
				}
				continue
			}
			untrusted := slices.Contains(src.Untrusted, path)
			var doc struct {
				All      *bool    `json:"enableAllProjectMcpServers"`
				Enabled  []string `json:"enabledMcpjsonServers"`
				Disabled []string `json:"disabledMcpjsonServers"`
			}
			if err := json.Unmarshal(data, &doc); err != nil {
				return nil, nil, nil, fmt.Errorf("%w: %s: %v", ErrBadConfig, path, err)
			}
			approves := !untrusted && !slices.Contains(src.NoApprovals, path)
			if (doc.All != nil || len(doc.Enabled) > 0) && !approves {
				why := "it comes with the repository; approve project servers in a settings.local.json or the user's settings"
				if untrusted {
					why = "the folder is not trusted (troupe trust)"
				}
				warnings = append(warnings, fmt.Sprintf("%s: enableAllProjectMcpServers and enabledMcpjsonServers ignored: %s", path, why))
			}
			if doc.All != nil && approves {
				approve.all = *doc.All
			}
			if approves {
				approve.enabled = append(approve.enabled, doc.Enabled...)
			}
			approve.disabled = append(approve.disabled, doc.Disabled...) // refusing is always allowed
			l, err := Parse(data, path)
			if err != nil {
				return nil, nil, nil, err
			}
			if untrusted {
				for _, s := range l {
					warnings = append(warnings, fmt.Sprintf("MCP server %q of %s is not started: the folder is not trusted (troupe trust)", s.Name, path))
				}
				held = append(held, l...)
				continue
			}
			layers = append(layers, l)
		}
		if src.Project != "" {
			data, err := readOptional(src.Project)
			if err != nil {
				return nil, nil, nil, err
			}
			if data != nil && src.ProjectUntrusted {
				l, _, _ := parseEach(data, src.Project)
				for _, s := range l {
					warnings = append(warnings, fmt.Sprintf("MCP server %q of %s is not started: the folder is not trusted (troupe trust)", s.Name, src.Project))
				}
				held = append(held, l...)
			} else if data != nil {
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
						warnings = append(warnings, fmt.Sprintf("MCP server %q of %s is not started: approve it with \"enabledMcpjsonServers\": [%q] (or \"enableAllProjectMcpServers\": true) in .claude/settings.local.json, .troupe/settings.local.json or the user's settings", s.Name, src.Project, s.Name))
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
			return nil, nil, nil, err
		}
		layers = append(layers, l)
	}
	return Merge(layers...), held, warnings, nil
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
