package swarm

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/team"
)

// permissionUpdate is one item of a permission_response's
// permission_updates (docs/protocol.md section 6.4); only addRules is applied.
type permissionUpdate struct {
	Type  string `json:"type"`
	Rules []struct {
		ToolName    string `json:"toolName"`
		RuleContent string `json:"ruleContent,omitempty"`
	} `json:"rules"`
	Behavior    string `json:"behavior"`
	Destination string `json:"destination"`
}

// allowRules returns the allow rules added by permission updates, as rule
// strings. Updates of other kinds, and rules that do not parse, are left
// out: rules never widen beyond what parses.
func allowRules(updates []json.RawMessage) []string {
	var out []string
	for _, raw := range updates {
		var u permissionUpdate
		if json.Unmarshal(raw, &u) != nil || u.Type != "addRules" || u.Behavior != "allow" {
			continue
		}
		for _, r := range u.Rules {
			s := r.ToolName
			if r.RuleContent != "" {
				s += "(" + r.RuleContent + ")"
			}
			if _, err := permission.ParseRule(s); err == nil {
				out = append(out, s)
			}
		}
	}
	return out
}

// addRulesUpdate encodes rules as one addRules permission update.
func addRulesUpdate(rules []permission.Rule, destination string) (json.RawMessage, error) {
	u := permissionUpdate{Type: "addRules", Behavior: "allow", Destination: destination}
	for _, r := range rules {
		u.Rules = append(u.Rules, struct {
			ToolName    string `json:"toolName"`
			RuleContent string `json:"ruleContent,omitempty"`
		}{r.Tool, r.Specifier})
	}
	b, err := json.Marshal(u)
	if err != nil {
		return nil, fmt.Errorf("encode permission update: %w", err)
	}
	return b, nil
}

// ExactRule returns the rule that allows exactly this call again, or ""
// when no rule can (permission.ExactRule without a shell parser: a Bash
// command of plain words only). The '*' and ':*' of a model's command
// never become wildcards.
func ExactRule(tool string, input json.RawMessage) string {
	return permission.ExactRule(tool, input, nil)
}

// TeamPath returns the teamAllowedPaths entry of a folder rule of a file
// tool, "Edit(//abs/dir/**)" or "Read(//abs/dir/**)" (TeamRules' inverse),
// and false for any other rule.
func TeamPath(rule string) (team.AllowedPath, bool) {
	tool, rest, ok := strings.Cut(rule, "(//")
	if !ok || (tool != "Edit" && tool != "Read") {
		return team.AllowedPath{}, false
	}
	dir, ok := strings.CutSuffix(rest, "/**)")
	if !ok || dir == "" || strings.ContainsAny(dir, "*?[]{}()") || strings.Contains("/"+dir+"/", "/../") {
		return team.AllowedPath{}, false
	}
	return team.AllowedPath{Path: "/" + dir, ToolName: tool}, true
}

// TeamRules turns a team's allowed paths (teamAllowedPaths) into allow
// rules for every teammate: the path and everything below it, for the
// tool named (Edit covers the writing tools, Read the reading ones).
func TeamRules(paths []team.AllowedPath) []string {
	var out []string
	for _, p := range paths {
		if p.Path == "" || p.ToolName == "" || p.Path[0] != '/' {
			continue
		}
		r := p.ToolName + "(/" + p.Path + "/**)"
		if _, err := permission.ParseRule(r); err == nil {
			out = append(out, r)
		}
	}
	return out
}
