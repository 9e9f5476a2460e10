// Package team models an agent team: the team file (config.json in
// docs/protocol.md section 2), its members, their names and colors, and the Store
// that persists teams.
//
// The types encode to and decode from exactly the JSON that Claude Code
// reads and writes, and keep every key they do not model, so a rewrite by
// troupe never drops what another program stored.
//
// Everything in this package except the Store implementations is pure: no
// I/O, no clock reads (callers pass the time), no goroutines.
package team

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/troupe-dev/troupe/internal/jsonx"
)

// LeadName is the name of every team's lead agent.
const LeadName = "team-lead"

// Backend types, as stored in a member's backendType.
const (
	BackendInProcess = "in-process"
	BackendTmux      = "tmux"
	BackendITerm2    = "iterm2"
)

// Pane ids with a fixed meaning.
const (
	PaneLeader    = "leader"
	PaneInProcess = "in-process"
)

// AgentID returns the id of agent name in team: "name@team".
func AgentID(name, team string) string { return name + "@" + team }

// LeadID returns the lead's agent id in team: "team-lead@team".
func LeadID(team string) string { return AgentID(LeadName, team) }

// ParseAgentID splits "name@team".
func ParseAgentID(id string) (name, team string, err error) {
	name, team, ok := strings.Cut(id, "@")
	if !ok || name == "" || team == "" || strings.Contains(team, "@") {
		return "", "", fmt.Errorf("agent id %q: want name@team", id)
	}
	return name, team, nil
}

// AllowedPath is a team-wide path permission (teamAllowedPaths).
type AllowedPath struct {
	Path     string `json:"path"`
	ToolName string `json:"toolName"`
	AddedBy  string `json:"addedBy,omitempty"`
	AddedAt  int64  `json:"addedAt,omitempty"`
}

// Config is the team file.
type Config struct {
	Name             string        `json:"name"`
	Description      string        `json:"description,omitempty"`
	CreatedAt        int64         `json:"createdAt"` // epoch ms
	LeadAgentID      string        `json:"leadAgentId"`
	LeadSessionID    string        `json:"leadSessionId,omitempty"`
	HiddenPaneIDs    []string      `json:"hiddenPaneIds,omitempty"`
	TeamAllowedPaths []AllowedPath `json:"teamAllowedPaths,omitempty"`
	Members          []Member      `json:"members"`

	// Extra keeps the keys this type does not model (leadProcess, say).
	Extra jsonx.Extra `json:"-"`
}

var configKeys = []string{"name", "description", "createdAt", "leadAgentId", "leadSessionId", "hiddenPaneIds", "teamAllowedPaths", "members"}

type configAlias Config

// MarshalJSON encodes c with its unknown keys.
func (c Config) MarshalJSON() ([]byte, error) {
	a := configAlias(c)
	if a.Members == nil {
		a.Members = []Member{}
	}
	b, err := json.Marshal(a)
	if err != nil {
		return nil, err
	}
	return jsonx.Join(b, c.Extra, configKeys...)
}

// UnmarshalJSON decodes a team file. It fails, naming the field, when a
// field it models has the wrong type or a member lacks agentId or name.
func (c *Config) UnmarshalJSON(data []byte) error {
	extra, err := jsonx.Split(data, configKeys...)
	if err != nil {
		return fmt.Errorf("team file: %w", err)
	}
	var raw struct {
		configAlias
		Members []json.RawMessage `json:"members"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("team file: %w", describe(err))
	}
	*c = Config(raw.configAlias)
	c.Members = make([]Member, 0, len(raw.Members))
	for i, m := range raw.Members {
		var mem Member
		if err := json.Unmarshal(m, &mem); err != nil {
			return fmt.Errorf("team file: members[%d]: %w", i, err)
		}
		c.Members = append(c.Members, mem)
	}
	c.Extra = extra
	return nil
}

// Member is one agent of a team.
type Member struct {
	AgentID          string   `json:"agentId"`
	Name             string   `json:"name"`
	AgentType        string   `json:"agentType,omitempty"`
	Model            string   `json:"model,omitempty"`
	Prompt           string   `json:"prompt,omitempty"`
	Color            string   `json:"color,omitempty"`
	PlanModeRequired bool     `json:"planModeRequired,omitempty"`
	JoinedAt         int64    `json:"joinedAt"` // epoch ms
	TmuxPaneID       string   `json:"tmuxPaneId"`
	Cwd              string   `json:"cwd"`
	Subscriptions    []string `json:"subscriptions"`
	BackendType      string   `json:"backendType,omitempty"`
	IsActive         *bool    `json:"isActive,omitempty"`
	Mode             string   `json:"mode,omitempty"`

	// Extra keeps the keys this type does not model.
	Extra jsonx.Extra `json:"-"`
}

var memberKeys = []string{"agentId", "name", "agentType", "model", "prompt", "color", "planModeRequired", "joinedAt", "tmuxPaneId", "cwd", "subscriptions", "backendType", "isActive", "mode"}

type memberAlias Member

// CheckText refuses a member whose text fields are not valid UTF-8 (stored
// as JSON the bad bytes would be silently replaced by U+FFFD), with an error
// naming the field.
func (m Member) CheckText() error {
	fields := []struct{ name, v string }{{"name", m.Name}, {"agentType", m.AgentType}, {"model", m.Model},
		{"prompt", m.Prompt}, {"color", m.Color}, {"tmuxPaneId", m.TmuxPaneID}, {"cwd", m.Cwd},
		{"backendType", m.BackendType}, {"mode", m.Mode}}
	for _, s := range m.Subscriptions {
		fields = append(fields, struct{ name, v string }{"subscriptions", s})
	}
	for _, f := range fields {
		if !utf8.ValidString(f.v) {
			return fmt.Errorf("member %s: %s: not valid UTF-8", m.Name, f.name)
		}
	}
	return nil
}

// MarshalJSON encodes m with its unknown keys.
func (m Member) MarshalJSON() ([]byte, error) {
	a := memberAlias(m)
	if a.Subscriptions == nil {
		a.Subscriptions = []string{}
	}
	b, err := json.Marshal(a)
	if err != nil {
		return nil, err
	}
	return jsonx.Join(b, m.Extra, memberKeys...)
}

// UnmarshalJSON decodes a member; agentId and name are required strings.
func (m *Member) UnmarshalJSON(data []byte) error {
	extra, err := jsonx.Split(data, memberKeys...)
	if err != nil {
		return err
	}
	var a memberAlias
	if err := json.Unmarshal(data, &a); err != nil {
		return describe(err)
	}
	if a.AgentID == "" {
		return fmt.Errorf("agentId: missing or empty")
	}
	if a.Name == "" {
		return fmt.Errorf("name: missing or empty")
	}
	*m = Member(a)
	m.Extra = extra
	return nil
}

// Active reports whether the member is working. An absent isActive counts as
// active, as Claude Code reads it.
func (m Member) Active() bool { return m.IsActive == nil || *m.IsActive }

// IsLead reports whether m is its team's lead.
func (m Member) IsLead() bool { return m.Name == LeadName }

// InPane reports whether m is a teammate that runs in a pane (tmux,
// iTerm2) rather than in its lead's process. Leads (troupe's and Claude
// Code's) start such teammates with their verify key: they act only on
// the protocol frames (permission verdicts, shutdown requests, plan
// approvals) that the lead signed.
func (m Member) InPane() bool {
	return !m.IsLead() && m.BackendType != "" && m.BackendType != BackendInProcess
}

// Clone returns a deep copy of c.
func (c Config) Clone() Config {
	out := c
	out.HiddenPaneIDs = slices.Clone(c.HiddenPaneIDs)
	out.TeamAllowedPaths = slices.Clone(c.TeamAllowedPaths)
	out.Extra = c.Extra.Clone()
	// Room for one more member: a team update clones the roster and
	// AddMember appends to it, which copied the whole roster again.
	out.Members = make([]Member, len(c.Members), len(c.Members)+1)
	// One array holds every member's copied isActive flag: a team update
	// clones the roster, and a thousand members made a thousand tiny
	// allocations for it. Each member still gets a flag of its own.
	n := 0
	for _, m := range c.Members {
		if m.IsActive != nil {
			n++
		}
	}
	flags := make([]bool, n)
	for i, m := range c.Members {
		cm := m
		cm.Subscriptions = slices.Clone(m.Subscriptions)
		if m.IsActive != nil {
			flags[0] = *m.IsActive
			cm.IsActive, flags = &flags[0], flags[1:]
		}
		cm.Extra = m.Extra.Clone()
		out.Members[i] = cm
	}
	return out
}

// Clone returns a deep copy of m.
func (m Member) Clone() Member {
	out := m
	out.Subscriptions = slices.Clone(m.Subscriptions)
	if m.IsActive != nil {
		v := *m.IsActive
		out.IsActive = &v
	}
	out.Extra = m.Extra.Clone()
	return out
}

// Member returns the member called name.
func (c *Config) Member(name string) (*Member, bool) {
	for i := range c.Members {
		if c.Members[i].Name == name {
			return &c.Members[i], true
		}
	}
	return nil, false
}

// Names returns the member names in roster order.
func (c *Config) Names() []string {
	out := make([]string, len(c.Members))
	for i, m := range c.Members {
		out[i] = m.Name
	}
	return out
}

// describe turns a json type error into "field: want T, got V".
func describe(err error) error {
	var te *json.UnmarshalTypeError
	if ok := asTypeError(err, &te); ok {
		return fmt.Errorf("%s: want %s, got JSON %s", te.Field, te.Type, te.Value)
	}
	return err
}
