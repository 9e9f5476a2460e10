package mcp

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// String describes the server in one line for people: name, target,
// kind, state and, when connected, how many tools it has.
func (st Status) String() string {
	line := fmt.Sprintf("%s: %s (%s) - %s", st.Name, st.Target, st.Kind, st.State)
	if st.State == StateConnected {
		line += fmt.Sprintf(", %d tools", len(st.Tools))
	}
	return line
}

// Report is what /mcp shows of servers: each one's state and tools, or
// why it failed.
func Report(sts []Status) string {
	if len(sts) == 0 {
		return "No MCP servers. Configure them in .mcp.json, the settings files or --mcp-config; troupe mcp add adds one (docs/mcp.md)."
	}
	var b strings.Builder
	b.WriteString("MCP servers:")
	for _, st := range sts {
		b.WriteString("\n" + st.String())
		if st.Restart > 0 {
			fmt.Fprintf(&b, " (restarted %d time)", st.Restart)
		}
		if st.Err != nil {
			b.WriteString("\n  " + strings.ReplaceAll(st.Err.Error(), "\n", "\n  "))
		}
		for _, t := range st.Tools {
			b.WriteString("\n  " + t)
		}
	}
	return b.String()
}

// Check loads the servers of src (only the one called name, when set),
// starts them with opts and returns their states and Load's warnings; it
// stops them before returning.
func Check(ctx context.Context, src Sources, opts Options, name string) ([]Status, []string, error) {
	servers, held, warnings, err := load(src)
	if err != nil {
		return nil, nil, err
	}
	if name != "" {
		servers = slices.DeleteFunc(servers, func(s Server) bool { return s.Name != name })
		held = slices.DeleteFunc(held, func(s Server) bool { return s.Name != name })
	}
	m := Start(ctx, servers, opts)
	defer m.Close()
	sts := m.Status()
	for _, s := range held { // listed, never started
		sts = append(sts, Status{Name: s.Name, Kind: s.Kind(), Target: (&server{cfg: s}).target(), State: StateUntrusted})
	}
	return sts, warnings, nil
}

// EnvOptions returns the Options of stdio servers started in dir, with
// Claude Code's MCP_TIMEOUT and MCP_TOOL_TIMEOUT (milliseconds) read
// through getenv, and ${VAR} resolved by getenv, then the process
// environment. A timeout that is not a positive number is an *ArgError.
func EnvOptions(dir string, getenv func(string) string) (Options, error) {
	opts := Options{Dir: dir, Lookup: func(k string) (string, bool) {
		if v := getenv(k); v != "" {
			return v, true
		}
		return os.LookupEnv(k)
	}}
	for _, v := range []struct {
		name string
		into *time.Duration
	}{{"MCP_TIMEOUT", &opts.StartTimeout}, {"MCP_TOOL_TIMEOUT", &opts.CallTimeout}} {
		s := strings.TrimSpace(getenv(v.name))
		if s == "" {
			continue
		}
		ms, err := strconv.ParseInt(s, 10, 64)
		if err != nil || ms <= 0 {
			return opts, argErrorf("%s=%q: want a positive number of milliseconds", v.name, s)
		}
		*v.into = time.Duration(ms) * time.Millisecond
	}
	return opts, nil
}
