package hooks

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Event is the name of a hook event, as in Claude Code's settings.
type Event string

// The events.
const (
	PreToolUse         Event = "PreToolUse"
	PermissionRequest  Event = "PermissionRequest"
	PostToolUse        Event = "PostToolUse"
	PostToolUseFailure Event = "PostToolUseFailure"
	UserPromptSubmit   Event = "UserPromptSubmit"
	Stop               Event = "Stop"
	SubagentStop       Event = "SubagentStop"
	TeammateIdle       Event = "TeammateIdle"
	TaskCreated        Event = "TaskCreated"
	TaskCompleted      Event = "TaskCompleted"
	SessionStart       Event = "SessionStart"
	SessionEnd         Event = "SessionEnd"
	PreCompact         Event = "PreCompact"
	Notification       Event = "Notification"
)

// Events lists every event in the order `troupe hooks list` shows them.
var Events = []Event{SessionStart, UserPromptSubmit, PreToolUse, PermissionRequest, PostToolUse, PostToolUseFailure,
	Notification, Stop, SubagentStop, TeammateIdle, TaskCreated, TaskCompleted, PreCompact, SessionEnd}

// DefaultTimeout is a hook's timeout when its settings give none.
const DefaultTimeout = 60 * time.Second

// Hook is one command hook.
type Hook struct {
	Event   Event
	Matcher string // as written; "" and "*" match everything
	Command string
	Timeout time.Duration
	Source  string // the settings file

	match func(string) bool
}

// Matches reports whether the hook applies to value (a tool name, or
// the event's own matcher field such as SessionStart's source).
func (h Hook) Matches(value string) bool {
	if h.match == nil {
		return true
	}
	return h.match(value)
}

// Config is the hooks of a set of settings files, read once.
type Config struct {
	Hooks []Hook
	// Warnings are what was skipped with a reason (an unknown event, a
	// hook type other than command), one "FILE: ..." line each.
	Warnings []string

	files []string
	sum   string
}

// Empty reports whether no hook is configured.
func (c *Config) Empty() bool { return c == nil || len(c.Hooks) == 0 }

// Has reports whether any hook is configured for ev.
func (c *Config) Has(ev Event) bool {
	if c == nil {
		return false
	}
	for _, h := range c.Hooks {
		if h.Event == ev {
			return true
		}
	}
	return false
}

// Matching returns the hooks of ev that match value.
func (c *Config) Matching(ev Event, value string) []Hook {
	if c == nil {
		return nil
	}
	var out []Hook
	for _, h := range c.Hooks {
		if h.Event == ev && h.Matches(value) {
			out = append(out, h)
		}
	}
	return out
}

// Load reads the hooks of the settings files, in order. A missing file is
// skipped; an unreadable or malformed one is an error naming it.
func Load(files []string) (*Config, error) {
	c := &Config{files: slices.Clone(files)}
	sum := sha256.New()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("hooks: %w", err)
		}
		hs, warns, raw, err := Parse(f, b)
		if err != nil {
			return nil, err
		}
		c.Hooks = append(c.Hooks, hs...)
		c.Warnings = append(c.Warnings, warns...)
		fmt.Fprintf(sum, "%s\x00%s\x00", f, raw)
	}
	c.sum = hex.EncodeToString(sum.Sum(nil))
	return c, nil
}

// Changed reloads the files c was loaded from and reports whether their
// hooks differ from c's (a file edited during the run). An error reading
// them counts as a change.
func (c *Config) Changed() bool {
	if c == nil {
		return false
	}
	now, err := Load(c.files)
	return err != nil || now.sum != c.sum
}

type matcherGroup struct {
	Matcher *string         `json:"matcher"`
	Hooks   json.RawMessage `json:"hooks"`
}

type hookEntry struct {
	Type    string   `json:"type"`
	Command string   `json:"command"`
	Timeout *float64 `json:"timeout"` // seconds
}

// Parse returns the hooks of one settings file's contents (source names
// it in errors), warnings for what it skipped, and the raw "hooks" value
// (empty when the file has none). Other keys are ignored; a malformed
// "hooks" value is an error naming the file and the offending key.
func Parse(source string, data []byte) (hooks []Hook, warnings []string, raw json.RawMessage, err error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil, nil, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, nil, nil, fmt.Errorf("hooks: %s: %v", source, err)
	}
	raw = top["hooks"]
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil, nil, nil
	}
	var byEvent map[string]json.RawMessage
	if err := json.Unmarshal(raw, &byEvent); err != nil {
		return nil, nil, nil, fmt.Errorf("hooks: %s: hooks: want an object of events, %v", source, err)
	}
	names := make([]string, 0, len(byEvent))
	for name := range byEvent {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		ev := Event(name)
		if !slices.Contains(Events, ev) {
			warnings = append(warnings, fmt.Sprintf("%s: hooks.%s: unknown event, skipped", source, name))
			continue
		}
		var groups []matcherGroup
		if err := json.Unmarshal(byEvent[name], &groups); err != nil {
			return nil, nil, nil, fmt.Errorf("hooks: %s: hooks.%s: want a list of {matcher, hooks}, %v", source, name, err)
		}
		for gi, g := range groups {
			key := fmt.Sprintf("hooks.%s[%d]", name, gi)
			var pattern string
			if g.Matcher != nil {
				pattern = *g.Matcher
			}
			match, err := compileMatcher(pattern)
			if err != nil {
				return nil, nil, nil, fmt.Errorf("hooks: %s: %s.matcher %q: %v", source, key, pattern, err)
			}
			var entries []hookEntry
			if err := json.Unmarshal(g.Hooks, &entries); err != nil || g.Hooks == nil {
				if err == nil {
					err = errors.New("missing")
				}
				return nil, nil, nil, fmt.Errorf("hooks: %s: %s.hooks: want a list of {type, command, timeout}, %v", source, key, err)
			}
			for hi, e := range entries {
				hkey := fmt.Sprintf("%s.hooks[%d]", key, hi)
				if e.Type != "command" {
					warnings = append(warnings, fmt.Sprintf("%s: %s: hook type %q is not supported (only command), skipped", source, hkey, e.Type))
					continue
				}
				if strings.TrimSpace(e.Command) == "" {
					return nil, nil, nil, fmt.Errorf("hooks: %s: %s: empty command", source, hkey)
				}
				timeout := DefaultTimeout
				if e.Timeout != nil {
					if *e.Timeout <= 0 || *e.Timeout > 86400 {
						return nil, nil, nil, fmt.Errorf("hooks: %s: %s.timeout %v: want seconds between 0 and 86400", source, hkey, *e.Timeout)
					}
					timeout = time.Duration(*e.Timeout * float64(time.Second))
				}
				hooks = append(hooks, Hook{Event: ev, Matcher: pattern, Command: e.Command, Timeout: timeout, Source: source, match: match})
			}
		}
	}
	return hooks, warnings, raw, nil
}

// simple is a matcher made of names and | only.
var simple = regexp.MustCompile(`^[A-Za-z0-9_\-|]+$`)

// compileMatcher turns a matcher into a function: "" and "*" match
// everything; names separated by | match exactly; anything else is a
// regular expression matched anywhere in the value (as Claude Code does:
// "Edit|Write", "mcp__.*", "Notebook").
func compileMatcher(m string) (func(string) bool, error) {
	switch {
	case m == "" || m == "*":
		return nil, nil
	case simple.MatchString(m):
		names := strings.Split(m, "|")
		return func(v string) bool { return slices.Contains(names, v) }, nil
	}
	re, err := regexp.Compile(m)
	if err != nil {
		return nil, err
	}
	return re.MatchString, nil
}
