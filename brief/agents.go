package brief

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/troupe-dev/troupe/internal/frontmatter"
)

// Sources of an Agent definition.
const (
	SourceBuiltin = "built-in"
	SourceProject = "project"
	SourceUser    = "user"
)

// Built-in agent types.
const (
	AgentGeneral = "general-purpose"
	AgentExplore = "Explore"
	AgentPlan    = "Plan"
)

// Agent is an agent type a sub-agent or teammate can be made from, in
// Claude Code's format: <dir>/<file>.md with front matter name,
// description and optional tools, disallowedTools, model, color and
// permissionMode, and troupe's maxBudgetUsd; the body is the agent's
// system prompt.
type Agent struct {
	Name        string
	Description string
	// Tools, when not nil, is the only tools the agent gets (after the
	// caller's own filtering); nil or ["*"] means all of them.
	Tools []string
	// DisallowedTools are taken away after Tools.
	DisallowedTools []string
	Model           string // "" or "inherit": the caller's model
	Color           string
	PermissionMode  string // "" inherits the caller's
	// MaxBudgetUSD (maxBudgetUsd), when positive, caps what a teammate of
	// this type may spend, in US dollars at list prices; it then stops.
	MaxBudgetUSD float64
	// Prompt is the system prompt (the file's body). A built-in has none
	// and names its Role instead.
	Prompt string
	Role   string // built-ins: the role template of its system prompt
	Source string // SourceBuiltin, SourceProject or SourceUser
	Path   string // the file, "" for a built-in
}

// Builtin reports whether a is one of troupe's own types; custom types
// get a stricter tool filter.
func (a Agent) Builtin() bool { return a.Source == SourceBuiltin }

// ReadOnlyTools are the tools of the read-only built-ins (Explore, Plan).
var ReadOnlyTools = []string{"Read", "Glob", "Grep", "WebFetch", "WebSearch", "Skill"}

// BuiltinAgents returns the built-in types: general-purpose (every tool),
// Explore (read-only, to search a code base) and Plan (read-only, to
// design an implementation).
func BuiltinAgents() []Agent {
	return []Agent{
		{Name: AgentGeneral, Source: SourceBuiltin, Role: RoleSubAgent,
			Description: "General-purpose agent for researching complex questions, searching for code, and executing multi-step tasks."},
		{Name: AgentExplore, Source: SourceBuiltin, Role: RoleExplore, Tools: slices.Clone(ReadOnlyTools),
			Description: "Fast read-only agent for exploring code bases: finds files by pattern, searches code for keywords, answers questions about how the code works. It cannot change anything."},
		{Name: AgentPlan, Source: SourceBuiltin, Role: RolePlan, Tools: slices.Clone(ReadOnlyTools),
			Description: "Read-only software architect agent for designing an implementation plan: returns step-by-step plans, the files that matter and the trade-offs. It cannot change anything."},
	}
}

// AgentDir is a folder of agent definitions and the source it stands for.
type AgentDir struct {
	Path, Source string
	// Untrusted marks a project folder the user has not trusted: its
	// definitions load without their permissionMode (they inherit the
	// caller's).
	Untrusted bool
}

// AgentDirs are the folders agent definitions are looked for in, in
// precedence order (a name found earlier wins): the project's
// .claude/agents and .troupe/agents, then the user's ~/.claude/agents
// and <troupe home>/agents.
func AgentDirs(cwd, userHome, troupeHome string) []AgentDir {
	var out []AgentDir
	for _, p := range definitionDirs("agents", cwd, "", "") {
		out = append(out, AgentDir{Path: p, Source: SourceProject})
	}
	for _, p := range definitionDirs("agents", "", userHome, troupeHome) {
		out = append(out, AgentDir{Path: p, Source: SourceUser})
	}
	return out
}

// agentName is what an agent type may be called.
var agentName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// PermissionModes are the values permissionMode may take.
var PermissionModes = []string{"acceptEdits", "auto", "bypassPermissions", "default", "dontAsk", "plan"}

// LoadAgents reads the *.md files of dirs (not their subfolders) as agent
// definitions; a name found in an earlier folder wins. A malformed file
// is reported in the error (file and line) and the others still load.
func LoadAgents(dirs []AgentDir) ([]Agent, error) {
	var out []Agent
	var errs []error
	seen := map[string]bool{}
	for _, dir := range dirs {
		ents, err := os.ReadDir(dir.Path)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("agents in %s: %w", dir.Path, err))
			}
			continue
		}
		for _, e := range ents {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".md") {
				continue
			}
			path := filepath.Join(dir.Path, e.Name())
			if err := linkedInside(path, dir.Path); err != nil {
				errs = append(errs, err)
				continue
			}
			a, err := readAgent(path)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if seen[a.Name] {
				continue
			}
			seen[a.Name] = true
			a.Source = dir.Source
			if dir.Untrusted {
				a.PermissionMode = ""
			}
			out = append(out, a)
		}
	}
	slices.SortFunc(out, func(a, b Agent) int { return strings.Compare(a.Name, b.Name) })
	return out, errors.Join(errs...)
}

// readAgent reads one definition file; an error names the file and,
// when it is about a field, the field's line.
func readAgent(path string) (Agent, error) {
	doc, err := readDefinition(path)
	if err != nil {
		return Agent{}, err
	}
	return agentFrom(path, doc)
}

// agentFrom makes the definition of a parsed file.
func agentFrom(path string, doc frontmatter.Doc) (Agent, error) {
	if _, ok := doc.Fields["name"]; !ok && len(doc.Fields) == 0 {
		return Agent{}, fmt.Errorf("%s:1: no front matter (an agent file starts with a --- line, then name: and description:)", path)
	}
	at := func(key string) string { return fmt.Sprintf("%s:%d", path, doc.Fields[key].Line) }
	a := Agent{Name: doc.Text("name"), Description: strings.TrimSpace(doc.Text("description")),
		Tools: doc.Strings("tools"), DisallowedTools: doc.Strings("disallowedTools"),
		Model: doc.Text("model"), Color: doc.Text("color"), PermissionMode: doc.Text("permissionMode"),
		Prompt: strings.TrimSpace(doc.Body), Path: path}
	for _, key := range []string{"name", "description", "model", "color", "permissionMode", "maxBudgetUsd"} {
		if v, ok := doc.Fields[key]; ok && v.IsList {
			return Agent{}, fmt.Errorf("%s: %s must be one value, not a list", at(key), key)
		}
	}
	switch {
	case a.Name == "":
		return Agent{}, fmt.Errorf("%s:1: no name (the subagent_type that selects the agent)", path)
	case !agentName.MatchString(a.Name):
		return Agent{}, fmt.Errorf("%s: name %q: want letters, digits, - and _ (at most 64, starting with a letter or digit)", at("name"), a.Name)
	case a.Description == "":
		return Agent{}, fmt.Errorf("%s:1: no description (the model picks agents by it)", path)
	case a.PermissionMode != "" && !slices.Contains(PermissionModes, a.PermissionMode):
		return Agent{}, fmt.Errorf("%s: permissionMode %q is not one of %s", at("permissionMode"), a.PermissionMode, strings.Join(PermissionModes, ", "))
	case strings.ContainsAny(a.Model, " \t\r\n") || len(a.Model) > 200:
		return Agent{}, fmt.Errorf("%s: model %q is not a model id (one word, at most 200 bytes)", at("model"), a.Model)
	case a.Prompt == "":
		return Agent{}, fmt.Errorf("%s:%d: no system prompt (the body below the front matter)", path, doc.BodyLine)
	}
	if v := strings.TrimSpace(doc.Text("maxBudgetUsd")); v != "" {
		usd, err := strconv.ParseFloat(v, 64)
		if err != nil || usd < 0 || usd != usd || usd > 1e9 {
			return Agent{}, fmt.Errorf("%s: maxBudgetUsd %q is not an amount in US dollars (want a number such as 0.50)", at("maxBudgetUsd"), v)
		}
		a.MaxBudgetUSD = usd
	}
	if v, ok := doc.Fields["tools"]; ok && !v.IsList && strings.TrimSpace(v.Text) == "" {
		a.Tools = nil // "tools:" with nothing: every tool, as when absent
	}
	if a.Model == "inherit" {
		a.Model = ""
	}
	return a, nil
}

// WithBuiltins returns the built-in types that custom ones do not
// replace, then the custom ones: the types a session offers.
func WithBuiltins(custom []Agent) []Agent {
	var out []Agent
	for _, b := range BuiltinAgents() {
		if !slices.ContainsFunc(custom, func(a Agent) bool { return a.Name == b.Name }) {
			out = append(out, b)
		}
	}
	return append(out, custom...)
}

// FindAgent returns the type called name in agents.
func FindAgent(agents []Agent, name string) (Agent, bool) {
	i := slices.IndexFunc(agents, func(a Agent) bool { return a.Name == name })
	if i < 0 {
		return Agent{}, false
	}
	return agents[i], true
}

// AgentNames returns the names of agents, in order.
func AgentNames(agents []Agent) []string {
	out := make([]string, len(agents))
	for i, a := range agents {
		out[i] = a.Name
	}
	return out
}
