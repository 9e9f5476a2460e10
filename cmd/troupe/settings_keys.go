package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/troupe-dev/troupe/backend"
	"github.com/troupe-dev/troupe/permission/settings"
)

// settingsTeammateMode returns the teammateMode of the settings files (as
// in Claude Code's settings.json), the last file that sets it winning; ""
// when none does. A value that is not a mode is an error naming the file.
func settingsTeammateMode(files []settings.File) (string, error) {
	mode, file, err := settingsKey[string](files, "teammateMode")
	switch {
	case err != nil || mode == "":
		return "", err
	case mode == backend.ModeAuto, mode == backend.ModeTmux, mode == backend.ModeITerm2, mode == backend.ModeInProcess:
		return mode, nil
	}
	return "", fmt.Errorf("%s: teammateMode %q: want auto, tmux, iterm2 or in-process", file, mode)
}

// settingsKey returns the top-level key of the settings files, the last
// file that sets it winning, and that file. Absent and unreadable files
// are skipped (the permission loader reports unreadable ones); a value of
// the wrong type is an error naming the file.
func settingsKey[T any](files []settings.File, key string) (v T, file string, err error) {
	for _, f := range files {
		b, rerr := os.ReadFile(f.Path)
		if rerr != nil {
			continue
		}
		var top map[string]json.RawMessage
		if json.Unmarshal(b, &top) != nil {
			continue // malformed: the permission loader names the position
		}
		raw, ok := top[key]
		if !ok {
			continue
		}
		var val T
		if err := json.Unmarshal(raw, &val); err != nil {
			var zero T
			return zero, f.Path, fmt.Errorf("%s: %s: %v", f.Path, key, err)
		}
		v, file = val, f.Path
	}
	return v, file, nil
}
