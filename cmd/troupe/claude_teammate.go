package main

// teammateCommand is the program pane teammates run instead of troupe:
// --teammate-command, else $TROUPE_TEAMMATE_COMMAND.
func teammateCommand(a *app, h *headless) string {
	if h.teams.command != "" {
		return h.teams.command
	}
	return a.Getenv(EnvTeammateCommand)
}
