// Package tmux runs teammates in tmux panes.
//
// Inside tmux ($TMUX set) the backend talks to the leader's server with
// -S <first comma field of $TMUX> and splits the leader's window, the
// leader's pane being $TMUX_PANE. Outside tmux it uses a dedicated server,
// -L troupe-swarm-<pid> (or Config.Socket), with one session
// (Config.Session, default troupe-swarm) and one window (swarm-view). The
// backend never runs tmux without -S or -L.
//
// These are the only tmux commands it issues:
//
//	display-message -p -t <leader> '#{window_id}'      inside: the leader's window
//	list-sessions -F '#{session_name}'                 outside: is the session there
//	new-session -d -s <session> -n <window> -x W -y H -P -F '#{pane_id}' -- cat - ;
//	display-message -p '#{socket_path}'                outside: the first teammate reuses its pane;
//	                                                   the socket file is removed after kill-server
//	split-window -d -t <leader> -h -l 70% -P -F '#{pane_id}' -- cat -
//	                                                   inside: the first teammate
//	split-window -d -t <pane> -v|-h -P -F '#{pane_id}' -- cat -
//	                                                   later teammates: the middle of troupe's panes,
//	                                                   -v for an odd count, -h for even
//	set-option -w -t <window> pane-border-status top
//	select-layout -t <window> main-vertical ; resize-pane -t <leader> -x 30%
//	                                                   inside, more than two panes
//	select-layout -t <window> tiled                    outside, more than one pane
//	select-pane -t <p> -T <name>                       with every # doubled
//	set-option -p -t <p> pane-border-format '#[fg=<c>,bold] #{pane_title} #[default]'
//	set-option -p -t <p> pane-border-style fg=<c>      and pane-active-border-style
//	set-option -p -t <p> window-style 'bg=default,fg=<c>'
//	set-option -p -t <p> remain-on-exit on
//	respawn-pane -k -t <p> -- /bin/sh -c '<command>'
//	display-message -p -t <p> '#{pane_pid}'
//	list-panes -a -F '#{pane_id}|#{pane_dead}|#{pane_pid}|#{pane_dead_status}|#{pane_dead_signal}'
//	capture-pane -p -J -t <p> -S -80                   a failed pane's last lines, for ExitError.Output
//	run-shell true                                     when a dead pane shows no exit status yet:
//	                                                   the job's exit makes tmux reap the pane's
//	                                                   process (tmux 3.3a sometimes misses it)
//	kill-pane -t <p>                                   only panes troupe created
//	list-panes -a -F '#{pane_id}', then kill-server    Close, outside, only when troupe
//	                                                   started the server and no pane is left
//
// Commands of one step are sent as one tmux command line joined by ";".
// Where this differs from Claude Code's own tmux panes: remain-on-exit
// is on, not failed, so that a clean exit's status is read too (troupe
// then kills the pane); the command execs the teammate and runs under
// /bin/sh, not the user's default-shell; titles are kept literal.
// Colours map the team palette: red, blue, green, yellow as is, purple to
// magenta, orange to colour208, pink to colour205, cyan as is.
//
// The pane command is one shell line (backend.PaneCommand), every word
// single-quoted, run by /bin/sh whatever the user's default-shell is:
//
//	. '<env file>' && rm -f '<env file>' && cd '<cwd>' && exec '<argv0>' '<arg>' ...
//
// The teammate's variables (API keys, tokens, OTLP headers) are in the env
// file, written by the backend 0600 in a 0700 folder of its own (package
// paneenv) and removed by the shell before the teammate starts: no value
// is on tmux's command line, the shell's, or tmux's pane_start_command,
// which any local user could read. A variable with an empty value is
// written as an empty quoted word, to mask a value the pane would inherit
// from the tmux server. exec makes the teammate the pane's process, so
// Handle.PID is the teammate's pid and the pane dies with it. A control
// character in any part is refused (tmux and the terminal would act on
// it). Close removes the folder of env files.
//
// Liveness: one supervisor goroutine per backend lists the server's panes
// every Config.PollInterval (500 ms) while there are teammates. A pane
// kept by remain-on-exit gives its exit status (Handle.Err is nil for 0, a
// *backend.ExitError otherwise) and is then killed, so a clean exit closes
// the pane too; a pane that is gone, or a server that is gone, ends the
// teammate with backend.ErrPaneGone.
//
// A Backend is safe for concurrent use; pane creation and re-tiling are
// serialised, the rest of a Spawn runs in parallel. Spawn is idempotent by
// AgentID (backend.ErrRunning). Kill and Close only ever kill panes this
// backend created.
package tmux
