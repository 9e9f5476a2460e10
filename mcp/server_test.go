package mcp_test

import (
	"os"
	"testing"

	"github.com/troupe-dev/troupe/mcp/mcptest"
)

// serverEnv selects the behaviour of this test binary started as a stdio
// MCP server.
const serverEnv = mcptest.Env

func TestMain(m *testing.M) {
	mcptest.Serve()
	os.Exit(m.Run())
}

func httpServers(t testing.TB) (streamable, sse string) { return mcptest.HTTP(t) }
