package agenttool

import "slices"

// Background is one background sub-agent the Agent tool keeps: running,
// or finished and resumable by SendMessage.
type Background struct {
	ID          string
	Name        string // "" when the call gave none
	Description string
	Running     bool
}

// Background lists the background sub-agents, by task id: what ListAgents
// shows of them.
func (t *Tool) Background() []Background {
	t.mu.Lock()
	defer t.mu.Unlock()
	seen := map[*live]bool{}
	var out []Background
	add := func(lv *live) {
		if seen[lv] {
			return
		}
		seen[lv] = true
		out = append(out, Background{ID: string(lv.id), Name: lv.name, Description: lv.description, Running: lv.running})
	}
	for _, lv := range t.agents {
		add(lv)
	}
	for _, lv := range t.finished {
		add(lv)
	}
	slices.SortFunc(out, func(a, b Background) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	return out
}
