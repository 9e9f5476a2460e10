package team

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxNameLen bounds team and agent names, in bytes.
const MaxNameLen = 64

var (
	agentNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)
	uuidRE      = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
)

// reserved are recipient names with a fixed meaning; no teammate may take
// them (compared case-insensitively). The lead's own name is LeadName.
var reserved = []string{LeadName, "main", "user", "system"}

// ValidateAgentName checks a teammate name: 1-64 characters from
// [A-Za-z0-9_-], starting with a letter or digit, not a reserved word and not
// shaped like a session id. LeadName itself is accepted only when lead is
// true.
func ValidateAgentName(name string, lead bool) error {
	if err := checkPathSafe("agent", name); err != nil {
		return err
	}
	if !agentNameRE.MatchString(name) {
		return &NameError{"agent", name, "want 1-64 characters of letters, digits, '-' or '_', starting with a letter or digit"}
	}
	if lead && name == LeadName {
		return nil
	}
	for _, r := range reserved {
		if strings.EqualFold(name, r) {
			return &NameError{"agent", name, "reserved name"}
		}
	}
	if uuidRE.MatchString(name) {
		return &NameError{"agent", name, "looks like a session id"}
	}
	return nil
}

// ValidateTeamName checks a team name as a user typed it: 1-64 bytes of
// letters, digits, spaces, '-', '_' and '.', with at least one letter or
// digit, and nothing that could reach outside the store's root.
func ValidateTeamName(name string) error {
	if err := checkPathSafe("team", name); err != nil {
		return err
	}
	alnum := false
	for _, r := range name {
		switch {
		case r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			alnum = true
		case r == ' ' || r == '-' || r == '_' || r == '.':
		default:
			return &NameError{"team", name, "only letters, digits, spaces, '-', '_' and '.' are allowed"}
		}
	}
	if !alnum {
		return &NameError{"team", name, "needs at least one letter or digit"}
	}
	return nil
}

// checkPathSafe refuses what could escape a folder: empty names, names that
// are too long, NUL and control characters, path separators, "." and "..",
// and absolute paths.
func checkPathSafe(kind, name string) error {
	switch {
	case name == "":
		return &NameError{kind, name, "empty"}
	case len(name) > MaxNameLen:
		return &NameError{kind, name, "longer than 64 bytes"}
	case !utf8.ValidString(name):
		return &NameError{kind, name, "not valid UTF-8"}
	case strings.ContainsRune(name, 0):
		return &NameError{kind, name, "contains NUL"}
	case strings.ContainsAny(name, `/\`):
		return &NameError{kind, name, "contains a path separator"}
	case name == "." || name == ".." || strings.Contains(name, ".."):
		return &NameError{kind, name, "contains '..'"}
	}
	for _, r := range name {
		if unicode.IsControl(r) {
			return &NameError{kind, name, "contains a control character"}
		}
	}
	return nil
}

// Sanitize returns the folder name of a team: lower-cased, every character
// outside [a-z0-9] replaced by '-' (docs/protocol.md section 1).
func Sanitize(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}

// SanitizePath returns the inbox or task-list file name for name: every
// character outside [a-zA-Z0-9_-] replaced by '-', case kept.
func SanitizePath(name string) string {
	var b strings.Builder
	for _, r := range name {
		if r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}

// CanonicalName validates a requested team name and returns the name troupe
// stores: its Sanitize form, so that the team folder, the inbox paths and the
// task list agree (Claude Code's two sanitisers differ on upper case).
func CanonicalName(name string) (string, error) {
	if err := ValidateTeamName(name); err != nil {
		return "", err
	}
	return Sanitize(strings.TrimSpace(name)), nil
}

var (
	adjectives = []string{"amber", "brave", "calm", "clever", "gentle", "golden", "keen", "lively", "misty", "nimble", "quiet", "rapid", "silver", "steady", "swift", "vivid"}
	nouns      = []string{"comet", "delta", "ember", "falcon", "grove", "harbor", "lantern", "meadow", "orbit", "pine", "river", "summit", "thistle", "willow", "zephyr", "otter"}
)

// SuffixedName returns name with a word suffix, "name-adjective-noun",
// choosing the words with pick (pick(n) returns a value in [0, n)). A long
// name is shortened so that the result fits in MaxNameLen.
func SuffixedName(name string, pick func(n int) int) string {
	suffix := "-" + adjectives[pick(len(adjectives))] + "-" + nouns[pick(len(nouns))]
	if len(name)+len(suffix) > MaxNameLen {
		name = strings.TrimRight(name[:MaxNameLen-len(suffix)], "-")
	}
	return name + suffix
}

// UniqueMemberName returns name, or name-2, name-3, ... when a member already
// has that name (compared case-insensitively).
func (c *Config) UniqueMemberName(name string) string {
	taken := func(n string) bool {
		for _, m := range c.Members {
			if strings.EqualFold(m.Name, n) {
				return true
			}
		}
		return false
	}
	if !taken(name) {
		return name
	}
	for i := 2; ; i++ {
		n := name + "-" + itoa(i)
		if !taken(n) {
			return n
		}
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b [20]byte
	n := len(b)
	for ; i > 0; i /= 10 {
		n--
		b[n] = byte('0' + i%10)
	}
	return string(b[n:])
}
