package settings

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseTrust: the trust file parser never panics, accepts only
// version-1 documents of absolute clean folders, and what it accepts
// writes back to a document it accepts again with the same folders.
func FuzzParseTrust(f *testing.F) {
	f.Add([]byte(`{"version":1,"folders":{"/home/u/src/app":{"trustedAt":"2026-01-02T03:04:05Z","runs":["hook SessionStart: x (.claude/settings.json)"]}}}`))
	f.Add([]byte(`{"version":1}`))
	f.Add([]byte(`{"version":2,"folders":{}}`))
	f.Add([]byte(`{"version":1,"folders":{"rel":{}}}`))
	f.Add([]byte(`{"version":1,"folders":{"/a/../b":{}}}`))
	f.Add([]byte("  \n"))
	f.Add([]byte(`{"version":1,"folders":{}} trailing`))
	f.Add([]byte(`{"version":1,"folders":{"/x":{"runs":"no"}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := parseTrust("trusted-folders.json", data)
		if err != nil {
			if !strings.Contains(err.Error(), "trusted-folders.json") {
				t.Errorf("error %q does not name the file", err)
			}
			return
		}
		for dir := range doc.Folders {
			if !filepath.IsAbs(dir) || filepath.Clean(dir) != dir {
				t.Errorf("accepted folder %q", dir)
			}
		}
		out, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		again, err := parseTrust("trusted-folders.json", out)
		if err != nil || len(again.Folders) != len(doc.Folders) {
			t.Errorf("round trip of %s: %d folders, %v; want %d", out, len(again.Folders), err, len(doc.Folders))
		}
	})
}
