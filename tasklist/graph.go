package tasklist

import (
	"slices"
	"sort"
)

// Normalize returns copies of tasks sorted by numeric id with dependency
// edges made symmetric: an edge recorded on either side (A.blocks has B, or
// B.blockedBy has A) appears on both. A store may hold one side only after a
// crash between the two writes of an edge; Normalize is how every reader
// sees a consistent graph. A blockedBy id that is not in tasks is kept: the
// blocker may be unreadable (a corrupt file) or its delete may have stopped
// before unlinking it, and a blocker nobody can read must keep blocking.
// A blocks id that is not in tasks, and self edges, are dropped.
func Normalize(tasks []Task) []Task {
	out := make([]Task, len(tasks))
	idx := make(map[string]int, len(tasks))
	for i, t := range tasks {
		out[i] = t.Clone()
		out[i].Blocks, out[i].BlockedBy = nil, nil
	}
	sort.SliceStable(out, func(i, j int) bool { return IDNum(out[i].ID) < IDNum(out[j].ID) })
	for i, t := range out {
		idx[t.ID] = i
	}
	add := func(blocker, blocked string) {
		a, okA := idx[blocker]
		b, okB := idx[blocked]
		if !okA || !okB || blocker == blocked {
			return
		}
		if !slices.Contains(out[a].Blocks, blocked) {
			out[a].Blocks = append(out[a].Blocks, blocked)
		}
		if !slices.Contains(out[b].BlockedBy, blocker) {
			out[b].BlockedBy = append(out[b].BlockedBy, blocker)
		}
	}
	for _, t := range tasks {
		for _, b := range t.Blocks {
			add(t.ID, b)
		}
		for _, b := range t.BlockedBy {
			add(b, t.ID)
			if _, known := idx[b]; !known && b != t.ID {
				if i := idx[t.ID]; !slices.Contains(out[i].BlockedBy, b) {
					out[i].BlockedBy = append(out[i].BlockedBy, b)
				}
			}
		}
	}
	for i := range out {
		sortIDs(out[i].Blocks)
		sortIDs(out[i].BlockedBy)
		if out[i].Blocks == nil {
			out[i].Blocks = []string{}
		}
		if out[i].BlockedBy == nil {
			out[i].BlockedBy = []string{}
		}
	}
	return out
}

func sortIDs(ids []string) {
	sort.Slice(ids, func(i, j int) bool { return IDNum(ids[i]) < IDNum(ids[j]) })
}

// OpenBlockers returns the ids in t.BlockedBy whose task is not completed,
// or is not in tasks at all: a blocker that cannot be read (a corrupt or
// missing record) is not known to be finished, so it still blocks. List.Delete
// strips a deleted task from every edge, which is what unblocks its tasks.
func OpenBlockers(t Task, tasks []Task) []string {
	status := make(map[string]Status, len(tasks))
	for _, x := range tasks {
		status[x.ID] = x.Status
	}
	var open []string
	for _, id := range t.BlockedBy {
		if s, ok := status[id]; (!ok || s != StatusCompleted) && id != t.ID && !slices.Contains(open, id) {
			open = append(open, id)
		}
	}
	return open
}

// Claimable reports whether t may be claimed: pending, unowned, and with
// every blocker completed.
func Claimable(t Task, tasks []Task) bool {
	return t.Status == StatusPending && t.Owner == "" && len(OpenBlockers(t, tasks)) == 0
}

// Ready returns the claimable tasks of a normalized list, in id order.
func Ready(tasks []Task) []Task {
	var out []Task
	for _, t := range tasks {
		if Claimable(t, tasks) {
			out = append(out, t)
		}
	}
	return out
}

// FindCycle reports whether adding the edge blocker -> blocked (blocker
// blocks blocked) to a normalized list would close a cycle, and returns the
// cycle as a path of ids from blocked back to blocker when it would.
func FindCycle(tasks []Task, blocker, blocked string) []string {
	if blocker == blocked {
		return []string{blocker}
	}
	next := make(map[string][]string, len(tasks))
	for _, t := range tasks {
		next[t.ID] = t.Blocks
	}
	// A cycle appears if blocker is reachable from blocked along blocks.
	prev := map[string]string{blocked: ""}
	queue := []string{blocked}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if cur == blocker {
			var path []string
			for at := cur; at != ""; at = prev[at] {
				path = append(path, at)
			}
			slices.Reverse(path)
			return path
		}
		for _, n := range next[cur] {
			if _, seen := prev[n]; !seen {
				prev[n] = cur
				queue = append(queue, n)
			}
		}
	}
	return nil
}
