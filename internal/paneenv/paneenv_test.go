package paneenv

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Files are owner-only in an owner-only folder, whatever the umask; Close
// removes the folder with what is left in it.
func TestWriteIsOwnerOnly(t *testing.T) {
	var d Dir
	var wg sync.WaitGroup
	paths := make([]string, 8)
	for i := range paths {
		wg.Go(func() {
			p, err := d.Write(map[string]string{"K": "v", "ANTHROPIC_API_KEY": "sk-x"})
			if err != nil {
				t.Error(err)
			}
			paths[i] = p
		})
	}
	wg.Wait()
	dir := filepath.Dir(paths[0])
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("folder mode %v; want 0700", fi.Mode().Perm())
	}
	for _, p := range paths {
		if filepath.Dir(p) != dir {
			t.Errorf("file %s outside %s", p, dir)
		}
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("file %s mode %v; want 0600", p, fi.Mode().Perm())
		}
		b, _ := os.ReadFile(p)
		if want := "export ANTHROPIC_API_KEY='sk-x'\nexport K='v'\n"; string(b) != want {
			t.Errorf("file holds %q; want %q", b, want)
		}
	}
	d.Remove(paths[0])
	if _, err := os.Stat(paths[0]); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Remove left %s: %v", paths[0], err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Close left %s: %v", dir, err)
	}
}

func TestWriteNothingOrBad(t *testing.T) {
	var d Dir
	defer d.Close()
	if p, err := d.Write(nil); p != "" || err != nil {
		t.Errorf("Write(nil) = %q, %v; want no file", p, err)
	}
	if p, err := d.Write(map[string]string{"A": "x\ny"}); err == nil || !strings.Contains(err.Error(), "environment variable A") {
		t.Errorf("Write of a newline = %q, %v; want an error naming A", p, err)
	}
}
