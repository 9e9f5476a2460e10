// Package hooks runs the command hooks of Claude Code's settings files
// ("hooks" key of settings.json): shell commands the user attaches to
// events of an agent's life (before and after a tool call, a submitted
// prompt, the end of a turn, team events), which may block, rewrite or
// comment on what the agent does.
//
// Load reads the hooks of a list of settings files once; the Config is a
// snapshot and never changes while a run uses it (Changed tells whether
// the files now say something else, for a warning). A Runner runs the
// hooks matching an event: in parallel, identical commands once, each in
// its own process group with the event's JSON on stdin, killed with its
// group after its timeout. Their results are merged into one Outcome
// following Claude Code's rules: exit 0 with optional JSON on stdout,
// exit 2 blocks with stderr as the reason, any other exit is a warning.
//
// The package knows nothing of agents or teams: the packages that raise
// events declare their own small interfaces and cmd adapts a Runner to
// them. A Runner is safe for concurrent use.
package hooks
