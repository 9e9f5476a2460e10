package troupe_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"path"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/troupe-dev/troupe"

// vocabulary are the packages that hold the shared types and pure logic
// (docs/architecture.md, "Layers").
var vocabulary = []string{"./team", "./mailbox", "./tasklist", "./permission", "./llm", "./tool", "./backend"}

// adapters are the trees that implement a vocabulary package; none may
// import another (docs/architecture.md, "Layers").
var adapters = []string{"./store/*/...", "./llm/*/...", "./tool/*/...", "./backend/*/...", "./mcp/..."}

// A rule forbids the packages matching from (and not except) to depend on
// packages matching deny (and not allow).
//
// Patterns: "./x" is the module package x and "./x/..." the tree below it;
// a path segment "*" matches any one segment; "std" is the standard
// library, "third-party" any package outside it and outside the module;
// anything else is an import path, "/..." meaning its tree. With direct
// set, only a package's own (non-test) imports are checked, which is the
// way to keep a third-party or standard package in its box; otherwise the
// whole dependency closure is.
type rule struct {
	name         string
	from, except []string
	deny, allow  []string
	direct       bool
	// otherTree makes deny match only outside the importer's own tree
	// (its first two path segments), for "never imports another adapter".
	otherTree bool
}

var rules = []rule{
	{name: "vocabulary imports only the standard library, internal/jsonx and other vocabulary", from: vocabulary, deny: []string{"third-party", "./..."}, allow: append([]string{"./internal/jsonx"}, vocabulary...)},
	{name: "an adapter never imports another adapter", from: adapters, except: []string{"./*/*test"}, deny: adapters, allow: []string{"./*/*test"}, otherTree: true},
	{name: "nothing but cmd imports cmd", from: []string{"./..."}, except: []string{"./cmd/..."}, deny: []string{"./cmd/..."}},
	{name: "charm.land (Bubble Tea, lipgloss) only in tui", from: []string{"./..."}, except: []string{"./tui/..."}, deny: []string{"charm.land/...", "github.com/charmbracelet/..."}, direct: true},
	{name: "chroma (syntax highlighting) only in tui", from: []string{"./..."}, except: []string{"./tui/..."}, deny: []string{"github.com/alecthomas/chroma/..."}, direct: true},
	{name: "nats.go only in store/nats and cmd", from: []string{"./..."}, except: []string{"./store/nats/...", "./cmd/..."}, deny: []string{"github.com/nats-io/..."}, direct: true},
	{name: "the Anthropic SDK only in llm/anthropic", from: []string{"./..."}, except: []string{"./llm/anthropic/..."}, deny: []string{"github.com/anthropics/..."}, direct: true},
	{name: "the shell parser (mvdan.cc/sh) only in permission/shell", from: []string{"./..."}, except: []string{"./permission/shell/..."}, deny: []string{"mvdan.cc/sh/..."}, direct: true},
	{name: "the OpenAI SDK only in llm/openai", from: []string{"./..."}, except: []string{"./llm/openai/..."}, deny: []string{"github.com/openai/..."}, direct: true},
	// worktree runs git: a worktree is git's own bookkeeping (.git/worktrees, refs, locks); hooks runs the user's hook commands; mcp starts stdio servers.
	{name: "hooks imports only the standard library and internal/procgroup, and only cmd imports hooks (raisers of events declare their own interfaces)", from: []string{"./hooks"}, deny: []string{"third-party", "./..."}, allow: []string{"./internal/procgroup"}},
	{name: "only the command line (cmd, cli) and session/kit (where agents are assembled) import hooks", from: []string{"./..."}, except: []string{"./cmd/...", "./cli/...", "./session/kit", "./hooks"}, deny: []string{"./hooks"}},
	{name: "the MCP go-sdk only in mcp", from: []string{"./..."}, except: []string{"./mcp/..."}, deny: []string{"github.com/modelcontextprotocol/..."}, direct: true},
	{name: "os/exec only in task, tool/bash, backend/tmux, backend/iterm2, worktree (git), hooks (the user's hook commands), permission/approve (the user's --permission-prompt-command), mcp (stdio servers), internal/procgroup (their process groups), session/demo (git and go test in the demo's project), cmd, cli/mate (finding --teammate-command on PATH), tool/prtool (`gh auth token` for a GitHub token), the bench harness and internal test helpers", from: []string{"./..."},
		except: []string{"./task/...", "./tool/bash/...", "./backend/tmux/...", "./backend/iterm2/...", "./worktree/...", "./hooks", "./permission/approve", "./mcp/...", "./internal/procgroup", "./session/demo", "./cmd/...", "./cli/mate", "./tool/prtool", "./bench/...", "./internal/*test*/..."}, deny: []string{"os/exec"}, direct: true},
	{name: "budget is pure: the standard library and llm only", from: []string{"./budget"}, deny: []string{"third-party", "./..."}, allow: []string{"./llm", "./internal/jsonx"}},
	{name: "budget/claudelog (Claude Code's transcripts read for usage) imports the standard library and llm only", from: []string{"./budget/claudelog"}, deny: []string{"third-party", "./..."}, allow: []string{"./llm", "./internal/jsonx"}},
	{name: "OpenTelemetry only in telemetry", from: []string{"./..."}, except: []string{"./telemetry/..."}, deny: []string{"go.opentelemetry.io/..."}, direct: true},
	{name: "protobuf (OTLP's wire format) only in telemetry", from: []string{"./..."}, except: []string{"./telemetry/..."}, deny: []string{"google.golang.org/protobuf/..."}, direct: true},
	{name: "the cron parser (robfig/cron) only in schedule", from: []string{"./..."}, except: []string{"./schedule/..."}, deny: []string{"github.com/robfig/..."}, direct: true},
	{name: "go-github (the GitHub REST client) only in tool/prtool", from: []string{"./..."}, except: []string{"./tool/prtool/..."}, deny: []string{"github.com/google/go-github/..."}, direct: true},
	{name: "chromedp only in dashboard tests (never in a non-test package)", from: []string{"./..."}, deny: []string{"github.com/chromedp/..."}, direct: true},
}

// pkg is one package of the build graph, as go list reports it.
type pkg struct {
	ImportPath string
	Standard   bool
	Imports    []string
}

// TestImportDirection enforces docs/architecture.md's import rules on every package of
// the module (test files excluded). Rules about packages that do not exist
// yet match nothing.
func TestImportDirection(t *testing.T) {
	graph, mods := loadGraph(t)
	if len(mods) == 0 {
		t.Fatal("go list ./... found no packages")
	}
	for _, v := range violations(rules, graph, mods) {
		t.Error(v)
	}
}

// violations returns one line per forbidden edge from a package in mods.
func violations(rules []rule, graph map[string]pkg, mods []string) []string {
	var out []string
	for _, r := range rules {
		for _, p := range mods {
			if !matchAny(r.from, p, graph) || matchAny(r.except, p, graph) {
				continue
			}
			deps := graph[p].Imports
			if !r.direct {
				deps = closure(graph, p)
			}
			for _, d := range deps {
				if matchAny(r.deny, d, graph) && !matchAny(r.allow, d, graph) && (!r.otherTree || tree(d) != tree(p)) {
					out = append(out, fmt.Sprintf("rule %q: %s imports %s%s", r.name, p, d, via(graph, p, d, r.direct)))
				}
			}
		}
	}
	return out
}

// loadGraph runs go list once over the module and its dependencies and
// returns every package by path, and the module's own packages.
func loadGraph(t *testing.T) (map[string]pkg, []string) {
	t.Helper()
	list := func(args ...string) []byte {
		// -e: a package that does not build yet (work in progress) is
		// still listed with the imports it declares.
		cmd := exec.CommandContext(t.Context(), "go", append([]string{"list", "-e"}, args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		return out
	}
	graph := map[string]pkg{}
	dec := json.NewDecoder(bytes.NewReader(list("-deps", "-json=ImportPath,Standard,Imports", "./...")))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("go list -deps -json: %v", err)
		}
		graph[p.ImportPath] = p
	}
	mods := strings.Fields(string(list("./...")))
	return graph, mods
}

// closure returns every package p depends on, directly or not.
func closure(graph map[string]pkg, p string) []string {
	seen := map[string]bool{}
	var out []string
	var walk func(string)
	walk = func(q string) {
		for _, d := range graph[q].Imports {
			if !seen[d] {
				seen[d] = true
				out = append(out, d)
				walk(d)
			}
		}
	}
	walk(p)
	slices.Sort(out)
	return out
}

// via explains an indirect edge: the chain of imports from p to d.
func via(graph map[string]pkg, p, d string, direct bool) string {
	if direct || slices.Contains(graph[p].Imports, d) {
		return ""
	}
	prev := map[string]string{p: ""}
	queue := []string{p}
	for len(queue) > 0 {
		q := queue[0]
		queue = queue[1:]
		for _, n := range graph[q].Imports {
			if _, ok := prev[n]; ok {
				continue
			}
			prev[n] = q
			if n == d {
				var chain []string
				for at := prev[d]; at != p; at = prev[at] {
					chain = append(chain, at)
				}
				slices.Reverse(chain)
				return " (via " + strings.Join(chain, " -> ") + ")"
			}
			queue = append(queue, n)
		}
	}
	return ""
}

func matchAny(patterns []string, p string, graph map[string]pkg) bool {
	for _, pat := range patterns {
		if match(pat, p, graph) {
			return true
		}
	}
	return false
}

// match reports whether import path p matches pattern pat (see rule).
func match(pat, p string, graph map[string]pkg) bool {
	inModule := p == module || strings.HasPrefix(p, module+"/")
	switch pat {
	case "std":
		return graph[p].Standard
	case "third-party":
		return !graph[p].Standard && !inModule
	}
	if rel, ok := strings.CutPrefix(pat, "./"); ok {
		if !inModule {
			return false
		}
		p = strings.TrimPrefix(strings.TrimPrefix(p, module), "/")
		pat = rel
		if pat == "..." {
			return true
		}
	}
	if base, ok := strings.CutSuffix(pat, "/..."); ok {
		return matchSegments(base, p, true)
	}
	return matchSegments(pat, p, false)
}

// matchSegments matches p against pat segment by segment with path.Match;
// with prefix, p may have more segments than pat.
func matchSegments(pat, p string, prefix bool) bool {
	ps, qs := strings.Split(pat, "/"), strings.Split(p, "/")
	if len(qs) < len(ps) || (!prefix && len(qs) != len(ps)) {
		return false
	}
	for i, s := range ps {
		if ok, _ := path.Match(s, qs[i]); !ok {
			return false
		}
	}
	return true
}

// tree returns the first two segments of a module package path below the
// module ("store/file" for store/file/internal/x).
func tree(p string) string {
	rel := strings.TrimPrefix(strings.TrimPrefix(p, module), "/")
	segs := strings.SplitN(rel, "/", 3)
	if len(segs) > 2 {
		segs = segs[:2]
	}
	return strings.Join(segs, "/")
}

// TestRulesMatch checks the pattern matcher on the shapes the rules use,
// so a typo in a pattern does not silently disable a rule.
func TestRulesMatch(t *testing.T) {
	graph := map[string]pkg{"os/exec": {ImportPath: "os/exec", Standard: true}}
	tests := []struct {
		pat, p string
		want   bool
	}{
		{"./team", module + "/team", true},
		{"./team", module + "/team/teamtest", false},
		{"./cmd/...", module + "/cmd", true},
		{"./cmd/...", module + "/cmd/troupe", true},
		{"./cmd/...", module + "/cmdx", false},
		{"./store/*/...", module + "/store/file", true},
		{"./store/*/...", module + "/store/file/internal/x", true},
		{"./store/*/...", module + "/store", false},
		{"./*/*test", module + "/mailbox/mailboxtest", true},
		{"./internal/*test*/...", module + "/internal/peertest", true},
		{"./internal/*test*/...", module + "/internal/lockfile", false},
		{"./...", module, true},
		{"./...", "github.com/spf13/cobra", false},
		{"third-party", "github.com/spf13/cobra", true},
		{"third-party", "os/exec", false},
		{"third-party", module + "/team", false},
		{"std", "os/exec", true},
		{"os/exec", "os/exec", true},
		{"os/exec", "os/execx", false},
		{"charm.land/...", "charm.land/bubbletea/v2", true},
		{"github.com/nats-io/...", "github.com/nats-io/nats.go/jetstream", true},
	}
	for _, tt := range tests {
		if got := match(tt.pat, tt.p, graph); got != tt.want {
			t.Errorf("match(%q, %q) = %v; want %v", tt.pat, tt.p, got, tt.want)
		}
	}
	if got := tree(module + "/store/file/internal/x"); got != "store/file" {
		t.Errorf("tree(store/file/internal/x) = %q; want store/file", got)
	}
}

// TestRulesCatch runs the rules over a made-up graph with one violation of
// each, and one allowed edge of each kind.
func TestRulesCatch(t *testing.T) {
	m := func(p string) string { return module + "/" + p }
	graph := map[string]pkg{}
	add := func(p string, std bool, imports ...string) {
		graph[p] = pkg{ImportPath: p, Standard: std, Imports: imports}
	}
	add("fmt", true)
	add("os/exec", true)
	add("github.com/x/y", false)
	add("charm.land/bubbletea/v2", false)
	add("github.com/nats-io/nats.go", false)
	add(m("internal/jsonx"), false, "fmt")
	add(m("internal/lockfile"), false, "fmt")
	add(m("team"), false, m("internal/jsonx"), m("internal/lockfile"))                    // vocabulary -> internal/lockfile
	add(m("mailbox"), false, m("team"), "github.com/x/y")                                 // vocabulary -> third-party
	add(m("tasklist"), false, m("internal/jsonx"), "fmt")                                 // fine
	add(m("mailbox/mailboxtest"), false, m("mailbox"), "github.com/x/y")                  // fine: not vocabulary
	add(m("store/file"), false, m("team"), m("store/file/internal/x"), m("store/mem"))    // -> another adapter
	add(m("store/file/internal/x"), false)                                                // fine: own tree
	add(m("store/mem"), false, m("team"), m("mailbox/mailboxtest"))                       // fine
	add(m("store/nats"), false, "github.com/nats-io/nats.go")                             // fine
	add(m("cmd/troupe"), false, m("store/file"), "os/exec", "github.com/nats-io/nats.go") // fine
	add(m("swarm"), false, m("cmd/troupe"), "os/exec", "charm.land/bubbletea/v2")         // three violations (nats.go through cmd is indirect: fine)
	add(m("tui"), false, "charm.land/bubbletea/v2")                                       // fine
	add(m("task"), false, "os/exec")                                                      // fine
	var mods []string
	for p := range graph {
		if strings.HasPrefix(p, module+"/") {
			mods = append(mods, p)
		}
	}
	slices.Sort(mods)
	got := violations(rules, graph, mods)
	want := []string{
		"team imports " + m("internal/lockfile"),
		"mailbox imports github.com/x/y",
		"mailbox imports " + m("internal/lockfile") + " (via " + m("team") + ")",
		"store/file imports " + m("store/mem"),
		"swarm imports " + m("cmd/troupe"),
		"swarm imports charm.land/bubbletea/v2",
		"swarm imports os/exec",
	}
	for _, w := range want {
		if !slices.ContainsFunc(got, func(g string) bool { return strings.Contains(g, w) }) {
			t.Errorf("violations lack %q; got:\n%s", w, strings.Join(got, "\n"))
		}
	}
	if len(got) != len(want) {
		t.Errorf("violations = %d; want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
}
