package main

import "context"

// startWorkerMCP connects the MCP servers of the worker's own
// configuration, once for all its jobs: its --mcp-config, the .mcp.json
// of its --cwd (approved in its settings, as for any agent), and the
// settings files of its host. The lead's servers are not used: they run
// on the lead's machine. Each job's agent gets their tools (kit.Tools adds
// them from the agent context). The worker says which servers connected;
// one that fails is a warning and the others still work.
func (a *app) startWorkerMCP(ctx context.Context, cwd string, say func(string, ...any)) (func(), error) {
	closeMCP, err := a.startMCP(ctx, cwd) // mcp.go
	if err != nil {
		return nil, err
	}
	if a.mcp.mgr != nil {
		for _, st := range a.mcp.mgr.Status() {
			say("MCP server %s", st)
		}
	}
	return closeMCP, nil
}
