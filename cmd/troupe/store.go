package main

import (
	"github.com/troupe-dev/troupe/store/file"
)

// OpenFileStore opens the file store rooted at home: the default store,
// on-disk compatible with Claude Code's agent teams.
func OpenFileStore(home string) (Stores, error) {
	s, err := file.Open(home, file.Options{})
	if err != nil {
		return Stores{}, err
	}
	return Stores{Teams: s.Teams(), Mail: s.Mail(), Tasks: s.Tasks(), Close: s.Close}, nil
}
