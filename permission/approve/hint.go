package approve

import (
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	"github.com/troupe-dev/troupe/permission"
)

// HeadlessHint tells the user of `troupe -p`, who cannot be asked, what
// would allow a call the policy asks about.
func HeadlessHint(p permission.Policy, cwd string, dirs []string) func(AskRequest) string {
	return func(r AskRequest) string {
		var ways []string
		if rules := suggestRules(p, r, cwd, dirs); len(rules) > 0 && allowedWith(p, r, cwd, dirs, rules) {
			ways = append(ways, fmt.Sprintf("--allowedTools %q (or the same in permissions.allow of .troupe/settings.json)", strings.Join(rules, " ")))
		}
		edit := slices.Contains([]string{"Write", "Edit", "MultiEdit", "NotebookEdit"}, r.Tool)
		if dir, outside := outsideDir(r, cwd, dirs); outside {
			way := fmt.Sprintf("--add-dir %s", dir)
			if edit && r.Mode != permission.ModeAcceptEdits {
				way += " --permission-mode acceptEdits"
			}
			ways = append(ways, way)
		} else if edit && r.Mode != permission.ModeAcceptEdits && r.Mode != permission.ModePlan {
			ways = append(ways, "--permission-mode acceptEdits")
		}
		if r.Mode != permission.ModePlan {
			ways = append(ways, "--permission-mode bypassPermissions (allows all but deny rules)")
		}
		ways = append(ways, "--permission-prompt-command CMD (to answer such questions)")
		return "troupe -p cannot ask; to allow it, run with " + strings.Join(ways, ", or ")
	}
}

// allowedWith reports whether the allow rules would let r run: they do
// not for writes of protected paths, which always ask.
func allowedWith(p permission.Policy, r AskRequest, cwd string, dirs []string, rules []string) bool {
	p.Allow = slices.Clone(p.Allow)
	for _, text := range rules {
		if rule, err := permission.ParseRule(text); err == nil {
			p.Allow = append(p.Allow, rule)
		}
	}
	return p.Check(permission.Request{Tool: r.Tool, Input: r.Input, Cwd: cwd, Dirs: dirs, Mode: r.Mode}).Behavior == permission.Allow
}

// outsideDir reports whether a file tool's call touches a path outside
// the working directories, and the folder --add-dir would need.
func outsideDir(r AskRequest, cwd string, dirs []string) (string, bool) {
	var in struct {
		FilePath     string `json:"file_path"`
		NotebookPath string `json:"notebook_path"`
		Path         string `json:"path"`
	}
	if json.Unmarshal(r.Input, &in) != nil {
		return "", false
	}
	p, isFile := in.FilePath, true
	if p == "" {
		p = in.NotebookPath
	}
	if p == "" {
		p, isFile = in.Path, false
	}
	if p == "" || strings.HasPrefix(p, "~") {
		return "", false
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	p = filepath.Clean(p)
	for _, d := range append([]string{cwd}, dirs...) {
		if rel, err := filepath.Rel(d, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return "", false
		}
	}
	if isFile {
		p = filepath.Dir(p)
	}
	return p, true
}

// suggestRules returns allow rules that would let the call run: for Bash,
// one rule per simple command that asks on its own; for other tools the
// tool name or its path.
func suggestRules(p permission.Policy, r AskRequest, cwd string, dirs []string) []string {
	switch r.Tool {
	case "Bash":
		var in struct {
			Command string `json:"command"`
		}
		if json.Unmarshal(r.Input, &in) != nil || p.Shell == nil {
			return nil
		}
		s, err := p.Shell(in.Command)
		if err != nil || len(s.Risks) > 0 {
			return nil // no rule allows these
		}
		var out []string
		for _, c := range s.Commands {
			words := make([]string, 0, len(c.Args))
			for _, w := range c.Args {
				if !w.Literal {
					return nil
				}
				words = append(words, permission.RuleWord(w.Value))
			}
			if len(words) == 0 {
				continue
			}
			one, _ := json.Marshal(map[string]string{"command": c.String()})
			if p.Check(permission.Request{Tool: "Bash", Input: one, Cwd: cwd, Dirs: dirs, Mode: r.Mode}).Behavior != permission.Ask {
				continue
			}
			rule := "Bash(" + strings.Join(words, " ") + ")"
			if _, err := permission.ParseRule(rule); err != nil {
				return nil
			}
			if !slices.Contains(out, rule) {
				out = append(out, rule)
			}
		}
		return out
	case "WebFetch":
		var in struct {
			URL string `json:"url"`
		}
		if json.Unmarshal(r.Input, &in) != nil {
			return nil
		}
		if u, err := url.Parse(in.URL); err == nil && u.Hostname() != "" {
			return []string{"WebFetch(domain:" + strings.ToLower(u.Hostname()) + ")"}
		}
		return nil
	case "Write", "Edit", "MultiEdit", "NotebookEdit", "Read", "Glob", "Grep", "NotebookRead", "LS":
		return nil // the mode and directory flags say it better
	}
	if r.Rule == nil {
		return []string{r.Tool}
	}
	return nil
}
