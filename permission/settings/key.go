package settings

import (
	"encoding/json"
	"fmt"
	"os"
)

// Key returns the top-level key of the settings files, the last file that
// sets it winning, and that file ("" when none does). Absent and
// unreadable files are skipped, and so are malformed ones (Load reports
// both, naming the position); a value of the wrong type is an error naming
// the file and the key.
func Key[T any](files []File, key string) (v T, file string, err error) {
	for _, f := range files {
		b, rerr := os.ReadFile(f.Path)
		if rerr != nil {
			continue
		}
		var top map[string]json.RawMessage
		if json.Unmarshal(b, &top) != nil {
			continue
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
