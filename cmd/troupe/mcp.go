package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"

	"github.com/troupe-dev/troupe/cli"
	"github.com/troupe-dev/troupe/cli/mcpcmd"

	"github.com/spf13/cobra"

	"github.com/troupe-dev/troupe/mcp"
	"github.com/troupe-dev/troupe/tool"
)

// mcpState is the process's MCP client: the flags that configure it and,
// once startMCP ran, the connected servers, whose tools every agent of
// the process gets (newAgentContext copies them).
type mcpState struct {
	configs []string // --mcp-config
	strict  bool     // --strict-mcp-config

	mgr   *mcp.Manager
	tools []tool.Tool
}

// addMCPFlags defines the MCP flags of troupe -p and the interactive lead.
func (a *app) addMCPFlags(root *cobra.Command) {
	f := root.Flags()
	f.StringArrayVar(&a.mcp.configs, "mcp-config", nil, "load MCP servers from this `FILE or JSON` ({\"mcpServers\": {...}}, Claude Code's format); repeatable")
	f.BoolVar(&a.mcp.strict, "strict-mcp-config", false, "use only the servers of --mcp-config, ignoring .mcp.json and the settings files")
}

// startMCP connects the configured MCP servers of an agent in cwd, once
// per process, and returns their shutdown. A server that fails is a
// warning on stderr and the others still work; a malformed configuration
// is an error.
func (a *app) startMCP(ctx context.Context, cwd string) (func(), error) {
	nothing := func() {}
	if a.mcp.mgr != nil {
		return nothing, nil
	}
	configs, err := a.mcpConfigs()
	if err != nil {
		return nothing, err
	}
	src, err := mcpcmd.Sources(a.App, cwd, configs, a.mcp.strict)
	if err != nil {
		return nothing, err
	}
	servers, warnings, err := mcp.Load(src)
	if err != nil {
		return nothing, err
	}
	for _, w := range warnings {
		a.WarnOnce(w)
	}
	if len(servers) == 0 {
		return nothing, nil
	}
	opts, err := mcpcmd.Options(a.App, cwd)
	if err != nil {
		return nothing, err
	}
	m := mcp.Start(ctx, servers, opts)
	for _, st := range m.Status() {
		if st.State != mcp.StateConnected {
			a.WarnOnce(st.Err.Error())
		}
	}
	a.mcp.mgr, a.mcp.tools = m, m.Tools()
	return func() { m.Close() }, nil
}

// EnvMCPConfigs carries a lead's inline JSON --mcp-config values to its
// pane teammates, as a JSON array of them: an inline configuration may
// hold a server's headers or environment (tokens), which must not go on
// the teammate's command line, where every local user can read them. The
// pane's environment comes from an owner-only file (package paneenv).
const EnvMCPConfigs = "TROUPE_MCP_CONFIGS"

// mcpConfigs returns the --mcp-config values, then those of
// $TROUPE_MCP_CONFIGS.
func (a *app) mcpConfigs() ([]string, error) {
	v := a.Getenv(EnvMCPConfigs)
	if v == "" {
		return a.mcp.configs, nil
	}
	var more []string
	if err := json.Unmarshal([]byte(v), &more); err != nil {
		return nil, cli.Usagef("$%s: want a JSON array of --mcp-config values: %v", EnvMCPConfigs, err)
	}
	return append(slices.Clone(a.mcp.configs), more...), nil
}

// withMCP gives a pane teammate the lead's MCP configuration: its
// --mcp-config files (made absolute) on the command line, its inline
// JSON ones in $TROUPE_MCP_CONFIGS, --strict-mcp-config, and MCP_TIMEOUT
// and MCP_TOOL_TIMEOUT in env. The teammate starts its own servers from
// them and from the shared files.
func (a *app) withMCP(argv []string, env map[string]string) []string {
	var inline []string
	configs, err := a.mcpConfigs()
	if err != nil {
		configs = a.mcp.configs // the lead's own run reports it
	}
	for _, c := range configs {
		if strings.HasPrefix(strings.TrimSpace(c), "{") {
			inline = append(inline, c)
			continue
		}
		if abs, err := filepath.Abs(c); err == nil {
			c = abs
		}
		argv = append(argv, "--mcp-config", c)
	}
	env[EnvMCPConfigs] = "" // masks an ambient value
	if len(inline) > 0 {
		b, _ := json.Marshal(inline)
		env[EnvMCPConfigs] = string(b)
	}
	if a.mcp.strict {
		argv = append(argv, "--strict-mcp-config")
	}
	for _, k := range []string{"MCP_TIMEOUT", "MCP_TOOL_TIMEOUT"} {
		if v := a.Getenv(k); v != "" {
			env[k] = v
		}
	}
	return argv
}

// mcpReport is what /mcp shows: each server's state and tools, or why it
// failed.
func (a *app) mcpReport() string {
	if a.mcp.mgr == nil {
		return mcp.Report(nil)
	}
	return mcp.Report(a.mcp.mgr.Status())
}
