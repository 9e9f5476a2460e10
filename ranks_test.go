package troupe_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// ranks give every package of the module a layer (docs/architecture.md): vocabulary
// < internal primitives < adapters < task < agent < swarm, coordinator,
// remote < bench (the benchmarks' processes, which open stores as session
// does) < session < tui, dashboard < cli < cmd. Finer steps inside one layer
// keep its packages in order too (tool above llm; lockfile above
// dirwatch; permission/approve and transcript on the agent side, below
// swarm). The longest matching prefix decides.
var ranks = []struct {
	prefix string
	rank   int
}{
	{"internal/jsonx", 0},
	{"team", 1}, {"mailbox", 1}, {"tasklist", 1}, {"permission", 1}, {"llm", 1}, {"backend", 1}, {"ask", 1}, {"tool", 2},
	{"internal", 10}, {"internal/gitenv", 5}, {"peer", 15}, {"internal/lockfile", 11}, {"internal/fileedit", 12}, {"memory", 10}, {"worktree", 10},
	{"store", 20}, {"llm/", 20}, {"tool/", 20}, {"backend/", 20}, {"permission/shell", 20}, {"permission/settings", 20},
	{"permission/audit", 20}, {"brief", 20}, {"mcp", 20}, {"hooks", 20}, {"budget", 20},
	{"task", 30}, {"tasklist", 1}, {"schedule", 30},
	{"agent", 40}, {"permission/approve", 45}, {"transcript", 45}, {"telemetry", 45},
	{"swarm", 50}, {"coordinator", 50}, {"remote", 50}, {"dream", 50}, {"workflow", 50},
	{"bench", 55},
	{"session", 60},
	{"tui", 70}, {"dashboard", 70},
	{"cli", 75},
	{"cmd", 80},
}

// rankDebts are the imports that break the ranks today, each with what
// would mend it. The test fails on any other, and on a debt paid (so the
// list only shrinks).
var rankDebts = map[string]string{
	"tool/agenttool -> agent": "the Agent tool builds sub-agents itself; a session kit should hand it a constructor (an interface defined in tool/agenttool)",
	"tool/agenttool -> task":  "the Agent tool registers local_agent tasks; the registry should come as an interface defined where it is used",
	"tool/tasktool -> task":   "TaskOutput and TaskStop read the registry; the same",
	"store/nats -> remote":    "the NATS store implements remote's job queue; the queue's types should live in vocabulary",
}

// support reports test support packages (and the module root, which holds
// only tests): they are not ranked.
func support(rel string) bool {
	return rel == "" || strings.HasSuffix(rel, "test")
}

// rankOf returns the rank of a module package path (relative to the
// module), and false when no prefix ranks it.
func rankOf(rel string) (int, bool) {
	best, rank := -1, 0
	for _, r := range ranks {
		p := r.prefix
		if rel == strings.TrimSuffix(p, "/") || strings.HasPrefix(rel, strings.TrimSuffix(p, "/")+"/") {
			if strings.HasSuffix(p, "/") && rel == strings.TrimSuffix(p, "/") {
				continue // "llm/" is the tree below llm, not llm
			}
			if len(p) > best {
				best, rank = len(p), r.rank
			}
		}
	}
	return rank, best >= 0
}

// treeOf is a package's own tree: its first path element, or for an
// adapter its first two (store/nats, tool/filetool).
func treeOf(rel string) string {
	parts := strings.Split(rel, "/")
	if len(parts) >= 2 && slices.Contains([]string{"store", "llm", "tool", "backend", "cmd", "internal"}, parts[0]) {
		return parts[0] + "/" + parts[1]
	}
	return parts[0]
}

// TestRanks refuses an import of an equal or higher rank outside a
// package's own tree, and an adapter imported by anything but session and
// cmd (and another package of its own tree).
func TestRanks(t *testing.T) {
	graph, mods := loadGraph(t)
	seen := map[string]bool{}
	for _, p := range mods {
		rel := strings.TrimPrefix(strings.TrimPrefix(p, module), "/")
		if support(rel) {
			continue
		}
		rp, ok := rankOf(rel)
		if !ok {
			t.Errorf("%s has no rank: add it to ranks (docs/architecture.md's layers)", rel)
			continue
		}
		for _, d := range graph[p].Imports {
			if d != module && !strings.HasPrefix(d, module+"/") {
				continue
			}
			drel := strings.TrimPrefix(strings.TrimPrefix(d, module), "/")
			rd, ok := rankOf(drel)
			if support(drel) || !ok || treeOf(drel) == treeOf(rel) || strings.HasPrefix(drel, rel+"/") || strings.HasPrefix(rel, drel+"/") {
				continue
			}
			edge := rel + " -> " + drel
			var bad string
			switch {
			case rd >= rp:
				bad = fmt.Sprintf("%s (rank %d) imports %s (rank %d)", rel, rp, drel, rd)
			case rd == 20 && !strings.HasPrefix(rel, "session") && rel != "bench" && !strings.HasPrefix(rel, "cli") && !strings.HasPrefix(rel, "cmd") && rp != 20:
				bad = fmt.Sprintf("%s imports the adapter %s: only session, bench, cli and cmd may", rel, drel)
			}
			if bad == "" {
				continue
			}
			if _, ok := rankDebts[edge]; ok {
				seen[edge] = true
				continue
			}
			t.Errorf("%s: arrows point down only (docs/architecture.md)", bad)
		}
	}
	for edge, why := range rankDebts {
		if !seen[edge] {
			t.Errorf("the known debt %q (%s) is paid: take it out of rankDebts", edge, why)
		}
	}
}
