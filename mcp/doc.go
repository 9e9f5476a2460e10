// Package mcp connects troupe to the Model Context Protocol with the
// official go-sdk: MCP servers become tools of every agent (the client
// side), and a troupe teammate's coordination tools are served over MCP
// so that any MCP-capable agent can join a team (the server side).
//
// Client: servers are configured in Claude Code's format (Parse, Merge,
// Expand) and started in parallel by Start, each bounded by a start
// timeout. A server that fails to start is reported in Manager.Status
// with its command and the tail of its stderr while the others work.
// Every tool of a connected server is a tool.Tool named
// mcp__<server>__<tool>; a server whose connection breaks is restarted
// once, then marked failed. A Manager is safe for concurrent use; its
// tools may be called from many agents at once.
package mcp
