// Package settings loads permission settings files (troupe's own and
// Claude Code's, same "permissions" block) and adds rules to them.
//
// A settings file is a JSON object; Load reads only its "permissions"
// key:
//
//	{"permissions": {"allow": ["Bash(npm test)"], "ask": [], "deny": ["Read(./.env)"],
//	  "defaultMode": "acceptEdits", "additionalDirectories": ["../lib"]}}
//
// Other keys, at the top and inside "permissions", are ignored. A missing
// file is skipped and a file holding only white space counts as empty,
// but a malformed file (invalid JSON, a wrong type, an unknown mode, an
// unparseable rule) is an error naming the file and the line:column or
// the rule; nothing falls back silently.
//
// Load and AddRule are safe for concurrent use; AddRule excludes other
// writers of the same file, in this process and others, with a lock
// directory and replaces the file atomically.
package settings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/troupe-dev/troupe/permission"
)

// Scope says where a settings file sits.
type Scope string

// The scopes, lowest precedence first.
const (
	ScopeUser        Scope = "user"        // $TROUPE_HOME/settings.json
	ScopeClaude      Scope = "claude"      // <cwd>/.claude/settings.json
	ScopeProject     Scope = "project"     // <cwd>/.troupe/settings.json
	ScopeClaudeLocal Scope = "claudeLocal" // <cwd>/.claude/settings.local.json
	ScopeLocal       Scope = "local"       // <cwd>/.troupe/settings.local.json
	ScopeCommandLine Scope = "commandLine" // --settings FILE
)

// File is one settings file to load.
type File struct {
	Path  string
	Scope Scope
	// Base is the directory relative path rules (./x, x, /x) and
	// additionalDirectories resolve against; empty means the working
	// directory of each request.
	Base string
	// Untrusted marks a file of a folder the user has not trusted (see
	// Trust): it may narrow permissions (ask and deny rules, plan mode)
	// but not widen them, start programs (hooks, MCP servers) or approve
	// the project's servers.
	Untrusted bool
}

// Project reports whether the file is one of the project folder's own
// (committed or local), not the user's or the command line's.
func (f File) Project() bool {
	switch f.Scope {
	case ScopeClaude, ScopeProject, ScopeClaudeLocal, ScopeLocal:
		return true
	}
	return false
}

// Files returns the standard settings files for a troupe home and a
// project directory, lowest precedence first: user, Claude Code project,
// troupe project, Claude Code local, troupe local. Later files override
// defaultMode; rules of all files apply together. The project's files
// are Untrusted unless the trust store of troupeHome trusts cwd
// (without a troupe home there is no store, and they are trusted).
func Files(troupeHome, cwd string) []File {
	var out []File
	if troupeHome != "" {
		out = append(out, File{Path: filepath.Join(troupeHome, "settings.json"), Scope: ScopeUser})
	}
	if cwd != "" {
		untrusted := troupeHome != "" && !Trust(troupeHome).Trusted(cwd)
		out = append(out,
			File{Path: filepath.Join(cwd, ".claude", "settings.json"), Scope: ScopeClaude, Base: cwd, Untrusted: untrusted},
			File{Path: filepath.Join(cwd, ".troupe", "settings.json"), Scope: ScopeProject, Base: cwd, Untrusted: untrusted},
			File{Path: filepath.Join(cwd, ".claude", "settings.local.json"), Scope: ScopeClaudeLocal, Base: cwd, Untrusted: untrusted},
			File{Path: filepath.Join(cwd, ".troupe", "settings.local.json"), Scope: ScopeLocal, Base: cwd, Untrusted: untrusted},
		)
	}
	return out
}

// Settings is the merge of the loaded files.
type Settings struct {
	// Allow, Ask and Deny hold every file's rules in load order; each
	// rule's Source is its file.
	Allow, Ask, Deny []permission.Rule
	// DefaultMode is the last file's defaultMode; empty when none sets it.
	DefaultMode permission.Mode
	// ModeSource is the file DefaultMode came from.
	ModeSource string
	// Dirs are the additionalDirectories of every file, absolute.
	Dirs []string
	// Loaded lists the files that existed and were read.
	Loaded []string
	// Warnings are what was accepted with a change, for the user to see
	// ("FILE: permissions.defaultMode: ...").
	Warnings []string
}

// Policy returns the rules as a permission.Policy (without Home and Shell).
func (s Settings) Policy() permission.Policy {
	return permission.Policy{Allow: s.Allow, Ask: s.Ask, Deny: s.Deny}
}

// FileError is a malformed settings file.
type FileError struct {
	Path      string
	Line, Col int    // 1-based; zero when the error has no position
	Key       string // the offending key, such as permissions.allow[2]
	Err       error
}

// Error returns "FILE[:LINE:COL][: KEY]: MESSAGE".
func (e *FileError) Error() string {
	var b strings.Builder
	b.WriteString(e.Path)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Col)
	}
	if e.Key != "" {
		b.WriteString(": " + e.Key)
	}
	b.WriteString(": " + e.Err.Error())
	return b.String()
}

// Unwrap returns the underlying error.
func (e *FileError) Unwrap() error { return e.Err }

// document is the part of a settings file Load reads.
type document struct {
	Permissions *struct {
		Allow                 []string `json:"allow"`
		Ask                   []string `json:"ask"`
		Deny                  []string `json:"deny"`
		DefaultMode           *string  `json:"defaultMode"`
		AdditionalDirectories []string `json:"additionalDirectories"`
	} `json:"permissions"`
}

// Load reads files in order and merges them. home expands ~/ in
// additionalDirectories.
func Load(files []File, home string) (Settings, error) {
	var s Settings
	for _, f := range files {
		data, err := os.ReadFile(f.Path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return Settings{}, fmt.Errorf("read settings: %w", err)
		}
		if err := s.merge(f, data, home); err != nil {
			return Settings{}, err
		}
		s.Loaded = append(s.Loaded, f.Path)
	}
	return s, nil
}

// merge merges one file's content into s.
func (s *Settings) merge(f File, data []byte, home string) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	var doc document
	if err := decode(data, &doc); err != nil {
		return positioned(f.Path, data, err)
	}
	p := doc.Permissions
	if p == nil {
		return nil
	}
	lists := []struct {
		key   string
		rules []string
		into  *[]permission.Rule
	}{{"allow", p.Allow, &s.Allow}, {"ask", p.Ask, &s.Ask}, {"deny", p.Deny, &s.Deny}}
	if f.Untrusted && len(p.Allow) > 0 {
		s.Warnings = append(s.Warnings, fmt.Sprintf("%s: permissions.allow ignored: the folder is not trusted (troupe trust)", f.Path))
		lists = lists[1:]
	}
	for _, l := range lists {
		for i, text := range l.rules {
			r, err := permission.ParseRule(text)
			if err != nil {
				return &FileError{Path: f.Path, Key: fmt.Sprintf("permissions.%s[%d]", l.key, i), Err: err}
			}
			r.Source, r.Base = f.Path, f.Base
			*l.into = append(*l.into, r)
		}
	}
	if p.DefaultMode != nil && *p.DefaultMode == claudeAutoMode && f.Untrusted {
		s.Warnings = append(s.Warnings, fmt.Sprintf("%s: permissions.defaultMode %q ignored: the folder is not trusted (troupe trust)", f.Path, claudeAutoMode))
	} else if p.DefaultMode != nil && *p.DefaultMode == claudeAutoMode {
		// Claude Code's classifier-judged mode has no troupe equivalent;
		// acceptEdits is the nearest that allows no more than it does.
		s.Warnings = append(s.Warnings, fmt.Sprintf("%s: permissions.defaultMode %q is Claude Code's auto mode, which troupe does not have; using %q", f.Path, claudeAutoMode, permission.ModeAcceptEdits))
		s.DefaultMode, s.ModeSource = permission.ModeAcceptEdits, f.Path
	} else if p.DefaultMode != nil {
		m, err := permission.ParseMode(*p.DefaultMode)
		if err != nil {
			return &FileError{Path: f.Path, Key: "permissions.defaultMode", Err: err}
		}
		if f.Untrusted && m != permission.ModeDefault && m != permission.ModePlan {
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s: permissions.defaultMode %q ignored: the folder is not trusted (troupe trust)", f.Path, m))
		} else {
			s.DefaultMode, s.ModeSource = m, f.Path
		}
	}
	if f.Untrusted && len(p.AdditionalDirectories) > 0 {
		s.Warnings = append(s.Warnings, fmt.Sprintf("%s: permissions.additionalDirectories ignored: the folder is not trusted (troupe trust)", f.Path))
		return nil
	}
	for i, d := range p.AdditionalDirectories {
		abs, err := resolveDir(d, f.Base, home)
		if err != nil {
			return &FileError{Path: f.Path, Key: fmt.Sprintf("permissions.additionalDirectories[%d]", i), Err: err}
		}
		s.Dirs = append(s.Dirs, abs)
	}
	return nil
}

// claudeAutoMode is Claude Code's "auto" permission mode.
const claudeAutoMode = "auto"

// decode unmarshals a whole JSON document, refusing trailing data.
func decode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		return err
	}
	off := dec.InputOffset()
	for off < int64(len(data)) && strings.IndexByte(" \t\r\n", data[off]) >= 0 {
		off++
	}
	if _, err := dec.Token(); err != io.EOF {
		return &trailingError{off}
	}
	return nil
}

// trailingError is data after the top-level JSON value.
type trailingError struct{ offset int64 }

func (e *trailingError) Error() string { return "unexpected data after the JSON object" }

func resolveDir(d, base, home string) (string, error) {
	switch {
	case d == "":
		return "", errors.New("empty directory")
	case d == "~" || strings.HasPrefix(d, "~/"):
		if home == "" {
			return "", errors.New("~ needs a home directory")
		}
		return filepath.Join(home, d[1:]), nil
	case strings.HasPrefix(d, "~"):
		return "", fmt.Errorf("%q: only ~/ is expanded", d)
	case filepath.IsAbs(d):
		return filepath.Clean(d), nil
	case base == "":
		return "", fmt.Errorf("%q: relative directory in a file without a project directory", d)
	}
	return filepath.Join(base, d), nil
}

// positioned turns a JSON error into a *FileError with line:column.
func positioned(path string, data []byte, err error) error {
	var (
		syn   *json.SyntaxError
		typ   *json.UnmarshalTypeError
		trail *trailingError
		off   int64 = -1
		key   string
	)
	switch {
	case errors.As(err, &trail):
		off = trail.offset
	case errors.As(err, &syn):
		off = syn.Offset
		err = errors.New(strings.TrimPrefix(syn.Error(), "json: "))
	case errors.As(err, &typ):
		off, key = typ.Offset, typ.Field
		err = fmt.Errorf("cannot use a JSON %s as %s", typ.Value, typ.Type)
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		off = int64(len(data))
		err = errors.New("unexpected end of JSON input")
	}
	if off < 0 {
		return &FileError{Path: path, Err: err}
	}
	line, col := lineCol(data, off)
	return &FileError{Path: path, Line: line, Col: col, Key: key, Err: err}
}

// lineCol returns the 1-based line and column (in bytes) of offset.
func lineCol(data []byte, off int64) (int, int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	before := data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}
