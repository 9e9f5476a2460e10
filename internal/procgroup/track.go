package procgroup

import "sync/atomic"

// kept is this process's ledger (Keep). It is process state, like the
// process's pid: the groups it records are the process's children, and
// Bash, background shells, MCP servers and hooks all record theirs in it
// without each being handed a ledger. Only main sets it; tests that run
// many agents in one process leave it unset, and Track is then a no-op.
var kept atomic.Pointer[Ledger]

// Keep makes l the ledger Track records in (nil: none).
func Keep(l *Ledger) { kept.Store(l) }

// Track records group pgid, just started, in the process's ledger; the
// returned function forgets it once nothing of the group runs. Both are
// no-ops when no ledger is kept; a failed write is ignored (the group is
// still killed at Close, only a SIGKILLed owner's would be missed).
func Track(pgid int) (forget func()) {
	l := kept.Load()
	if l == nil {
		return func() {}
	}
	_ = l.Add(pgid)
	return func() { _ = l.Remove(pgid) }
}
