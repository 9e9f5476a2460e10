package mcp

import (
	"fmt"
	"strings"
)

// ArgError is a command-line value (troupe mcp add's) or an environment
// setting (MCP_TIMEOUT) that cannot work; its text names the flag,
// argument or variable at fault.
type ArgError struct{ Err error }

func (e *ArgError) Error() string { return e.Err.Error() }
func (e *ArgError) Unwrap() error { return e.Err }

func argErrorf(format string, args ...any) error {
	return &ArgError{Err: fmt.Errorf(format, args...)}
}

// ServerArgs are troupe mcp add's arguments, as claude mcp add's.
type ServerArgs struct {
	// Transport is stdio, http or sse.
	Transport string
	// Args are NAME and then the command and its arguments (stdio) or
	// the url (http, sse).
	Args []string
	// Env are KEY=value entries of a stdio server's environment.
	Env []string
	// Headers are "Name: value" headers of an http or sse server.
	Headers []string
}

// Server returns the server a describes, kept in the file source, or an
// *ArgError. It does not check the server itself (AddServer does).
func (a ServerArgs) Server(source string) (Server, error) {
	args := a.Args
	if len(args) > 1 && args[1] == "--" { // NAME -- COMMAND ARGS
		args = append(args[:1:1], args[2:]...)
	}
	if len(args) < 2 {
		return Server{}, argErrorf("mcp add needs NAME and a command or url")
	}
	s := Server{Name: args[0], Source: source}
	switch a.Transport {
	case "stdio":
		if len(a.Headers) > 0 {
			return Server{}, argErrorf("--header is for http and sse servers")
		}
		s.Command, s.Args = args[1], args[2:]
	case "http", "sse":
		if len(args) > 2 || len(a.Env) > 0 {
			return Server{}, argErrorf("an %s server takes a url only: no arguments after it, no --env", a.Transport)
		}
		s.Type, s.URL = a.Transport, args[1]
	default:
		return Server{}, argErrorf("--transport %q: want stdio, http or sse", a.Transport)
	}
	for _, kv := range a.Env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return Server{}, argErrorf("--env %q: want KEY=value", kv)
		}
		if s.Env == nil {
			s.Env = map[string]string{}
		}
		s.Env[k] = v
	}
	for _, h := range a.Headers {
		k, v, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return Server{}, argErrorf("--header %q: want \"Name: value\"", h)
		}
		if s.Headers == nil {
			s.Headers = map[string]string{}
		}
		s.Headers[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return s, nil
}
