package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
)

// Transport kinds, as written in the "type" field of a server.
const (
	TypeStdio = "stdio"
	TypeHTTP  = "http"
	TypeSSE   = "sse"
)

// Server is one configured MCP server, in Claude Code's format.
type Server struct {
	Name    string            `json:"-"`
	Type    string            `json:"type,omitempty"` // stdio (the default with a command), http or sse
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// HeadersHelper and OAuth are Claude Code settings troupe accepts in a
	// shared file but does not implement: such a server fails to start,
	// saying so, and the others work.
	HeadersHelper string          `json:"headersHelper,omitempty"`
	OAuth         json.RawMessage `json:"oauth,omitempty"`
	// Source is where the server was configured (a file name, or
	// "--mcp-config"), for messages.
	Source string `json:"-"`
}

// ErrBadConfig is wrapped by every configuration error.
var ErrBadConfig = errors.New("bad MCP configuration")

// Parse decodes an MCP configuration: a JSON object with an
// "mcpServers" object of servers by name (the .mcp.json and --mcp-config
// format). Other top-level keys are ignored, so that a settings file may
// be passed whole. Servers are returned sorted by name; every server is
// checked (Check) and the first problem is returned naming the source
// and the server.
func Parse(data []byte, source string) ([]Server, error) {
	out, bad, err := parseEach(data, source)
	if err != nil {
		return nil, err
	}
	if len(bad) > 0 {
		return nil, bad[0]
	}
	return out, nil
}

// parseEach is Parse that goes on past a bad server: it returns the good
// ones and each bad one's error; err is for a file that is not such an
// object at all.
func parseEach(data []byte, source string) (out []Server, bad []error, err error) {
	var doc struct {
		Servers map[string]json.RawMessage `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, nil, fmt.Errorf("%w: %s: not a JSON object with mcpServers: %v", ErrBadConfig, source, err)
	}
	for _, name := range slices.Sorted(maps.Keys(doc.Servers)) {
		dec := json.NewDecoder(bytes.NewReader(doc.Servers[name]))
		dec.DisallowUnknownFields()
		var s Server
		if err := dec.Decode(&s); err != nil {
			bad = append(bad, fmt.Errorf("%w: %s: server %q: %v", ErrBadConfig, source, name, err))
			continue
		}
		s.Name, s.Source = name, source
		if err := s.Check(); err != nil {
			bad = append(bad, err)
			continue
		}
		out = append(out, s)
	}
	return out, bad, nil
}

// Check reports the first problem of s: a bad name, an unknown type, a
// stdio server without a command or an HTTP one without an http(s) URL.
func (s *Server) Check() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: server %q: %s", ErrBadConfig, s.Source, s.Name, fmt.Sprintf(format, args...))
	}
	if err := CheckName(s.Name); err != nil {
		return bad("%v", err)
	}
	switch s.Kind() {
	case TypeStdio:
		if strings.TrimSpace(s.Command) == "" {
			return bad("a stdio server needs a command")
		}
		if s.URL != "" || len(s.Headers) > 0 || s.HeadersHelper != "" || len(s.OAuth) > 0 {
			return bad("a stdio server takes no url, headers, headersHelper or oauth")
		}
	case TypeHTTP, TypeSSE:
		if s.Command != "" || len(s.Args) > 0 || len(s.Env) > 0 {
			return bad("an %s server takes a url, not a command, args or env", s.Kind())
		}
		if s.URL == "" {
			return bad("an %s server needs a url", s.Kind())
		}
		if !strings.Contains(s.URL, "${") { // checked again after expansion
			if err := checkURL(s.URL); err != nil {
				return bad("%v", err)
			}
		}
	default:
		return bad("unknown type %q (want stdio, http or sse)", s.Type)
	}
	return nil
}

func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("bad url: %v", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("url %q is not http(s)://host/...", raw)
	}
	return nil
}

// Kind returns the server's transport: its type, or stdio when the type
// is empty.
func (s *Server) Kind() string {
	if s.Type == "" {
		return TypeStdio
	}
	return s.Type
}

// CheckName reports whether name may name a server: letters, digits, _
// and -, not starting with _ and without "__", which separates the
// server from the tool in mcp__server__tool.
func CheckName(name string) error {
	if name == "" {
		return errors.New("empty server name")
	}
	for _, c := range name {
		if !(c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return fmt.Errorf("server name %q: invalid character %q (use letters, digits, _ and -)", name, c)
		}
	}
	if strings.Contains(name, "__") || strings.HasPrefix(name, "_") || strings.HasSuffix(name, "_") {
		return fmt.Errorf("server name %q: no leading, trailing or double underscore (it separates names in mcp__server__tool)", name)
	}
	return nil
}

// Merge returns the servers of the layers, later layers replacing
// earlier servers of the same name, sorted by name.
func Merge(layers ...[]Server) []Server {
	byName := map[string]Server{}
	for _, l := range layers {
		for _, s := range l {
			byName[s.Name] = s
		}
	}
	out := make([]Server, 0, len(byName))
	for _, n := range slices.Sorted(maps.Keys(byName)) {
		out = append(out, byName[n])
	}
	return out
}

// Expand returns s with ${VAR} and ${VAR:-default} replaced in its
// command, args, env values, url and headers, looking variables up with
// lookup. A variable that is unset and has no default is an error naming
// every such variable.
func (s Server) Expand(lookup func(string) (string, bool)) (Server, error) {
	var missing []string
	ex := func(v string) string {
		out, miss := expand(v, lookup)
		missing = append(missing, miss...)
		return out
	}
	s.Command = ex(s.Command)
	s.Args = slices.Clone(s.Args)
	for i := range s.Args {
		s.Args[i] = ex(s.Args[i])
	}
	s.URL = ex(s.URL)
	s.Env, s.Headers = exMap(s.Env, ex), exMap(s.Headers, ex)
	if len(missing) > 0 {
		slices.Sort(missing)
		return s, fmt.Errorf("%w: %s: server %q: environment variables not set and without a default: %s", ErrBadConfig, s.Source, s.Name, strings.Join(slices.Compact(missing), ", "))
	}
	if s.Kind() != TypeStdio {
		if err := checkURL(s.URL); err != nil {
			return s, fmt.Errorf("%w: %s: server %q: %v", ErrBadConfig, s.Source, s.Name, err)
		}
	}
	return s, nil
}

func exMap(m map[string]string, ex func(string) string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = ex(v)
	}
	return out
}

// expand replaces ${VAR} and ${VAR:-default} in v. Text that is not a
// well-formed reference (no closing brace, an empty or invalid name) is
// kept as written.
func expand(v string, lookup func(string) (string, bool)) (string, []string) {
	var b strings.Builder
	var missing []string
	for {
		i := strings.Index(v, "${")
		if i < 0 {
			b.WriteString(v)
			return b.String(), missing
		}
		j := strings.IndexByte(v[i:], '}')
		if j < 0 {
			b.WriteString(v)
			return b.String(), missing
		}
		ref := v[i+2 : i+j]
		name, def, hasDef := strings.Cut(ref, ":-")
		if !validVar(name) {
			b.WriteString(v[:i+j+1])
			v = v[i+j+1:]
			continue
		}
		b.WriteString(v[:i])
		if val, ok := lookup(name); ok {
			b.WriteString(val)
		} else if hasDef {
			b.WriteString(def)
		} else {
			missing = append(missing, name)
		}
		v = v[i+j+1:]
	}
}

func validVar(name string) bool {
	if name == "" || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	for _, c := range name {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
