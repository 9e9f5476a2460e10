package main

import (
	"fmt"

	"github.com/troupe-dev/troupe/backend"
	"github.com/troupe-dev/troupe/permission/settings"
)

// settingsTeammateMode returns the teammateMode of the settings files (as
// in Claude Code's settings.json), the last file that sets it winning; ""
// when none does. A value that is not a mode is an error naming the file.
func settingsTeammateMode(files []settings.File) (string, error) {
	mode, file, err := settings.Key[string](files, "teammateMode")
	switch {
	case err != nil || mode == "":
		return "", err
	case mode == backend.ModeAuto, mode == backend.ModeTmux, mode == backend.ModeITerm2, mode == backend.ModeInProcess:
		return mode, nil
	}
	return "", fmt.Errorf("%s: teammateMode %q: want auto, tmux, iterm2 or in-process", file, mode)
}

// settingsTeammateWindow reports whether the settings files ask for pane
// teammates in windows of their own (teammateWindow "window") rather than
// split panes ("split", the default); the last file that sets it wins. A
// value that is neither is an error naming the file.
func settingsTeammateWindow(files []settings.File) (bool, error) {
	v, file, err := settings.Key[string](files, "teammateWindow")
	switch {
	case err != nil:
		return false, err
	case v == "" || v == "split":
		return false, nil
	case v == "window":
		return true, nil
	}
	return false, fmt.Errorf("%s: teammateWindow %q: want split or window", file, v)
}

// settingsNoAltScreen reports whether the settings files turn the
// interactive lead's alternate screen off (altScreen false: the
// conversation stays in the terminal's scrollback); the last file that
// sets it wins. A value that is not a boolean is an error naming the file.
func settingsNoAltScreen(files []settings.File) (bool, error) {
	on, file, err := settings.Key[bool](files, "altScreen")
	return file != "" && !on, err
}

// settingsExplicitTeams reports whether the settings files ask for the
// seeds' explicit team flow (teams.explicit true: the lead is offered
// TeamCreate and TeamDelete); the last file that sets teams wins. A
// teams value that is not an object with a boolean explicit is an error
// naming the file.
func settingsExplicitTeams(files []settings.File) (bool, error) {
	v, _, err := settings.Key[struct {
		Explicit bool `json:"explicit"`
	}](files, "teams")
	return v.Explicit, err
}
