package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

var tempPattern = regexp.MustCompile(`^inbox\.json\.tmp\.[0-9a-f]{8}$`)

func TestTempNamePattern(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "inbox.json")
	seen := map[string]bool{}
	for range 100 {
		name, err := tempName(path)
		if err != nil {
			t.Fatalf("tempName(%q) error: %v", path, err)
		}
		if filepath.Dir(name) != dir {
			t.Errorf("tempName(%q) = %q; want a file in %q", path, name, dir)
		}
		if base := filepath.Base(name); !tempPattern.MatchString(base) {
			t.Errorf("tempName(%q) base = %q; want match %v", path, base, tempPattern)
		}
		seen[name] = true
	}
	if len(seen) < 99 {
		t.Errorf("100 tempName calls gave %d distinct names; want (nearly) 100", len(seen))
	}
}

func TestWriteFileTempNameSeenByBeforeCommit(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "inbox.json")
	var temps []string
	err := WriteFile(path, []byte("[]"), 0o644, Options{BeforeCommit: func() error {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, e := range entries {
			temps = append(temps, e.Name())
		}
		return nil
	}})
	if err != nil {
		t.Fatalf("WriteFile error: %v", err)
	}
	if len(temps) != 1 || !tempPattern.MatchString(temps[0]) {
		t.Errorf("directory during commit = %q; want exactly one entry matching %v", temps, tempPattern)
	}
}

func TestWriteFile(t *testing.T) {
	errVeto := errors.New("veto")
	tests := []struct {
		name    string
		initial []byte // nil: target does not exist
		data    []byte
		before  func() error
		wantErr error
		want    []byte // nil: target must not exist
	}{
		{name: "create", data: []byte(`[1]`), want: []byte(`[1]`)},
		{name: "replace", initial: []byte(`[1]`), data: []byte(`[1,2]`), want: []byte(`[1,2]`)},
		{name: "empty data", initial: []byte(`[1]`), data: []byte{}, want: []byte{}},
		{name: "before commit ok", initial: []byte(`[1]`), data: []byte(`[2]`), before: func() error { return nil }, want: []byte(`[2]`)},
		{name: "before commit error keeps target", initial: []byte(`[1]`), data: []byte(`[2]`), before: func() error { return errVeto }, wantErr: errVeto, want: []byte(`[1]`)},
		{name: "before commit error no target", data: []byte(`[2]`), before: func() error { return errVeto }, wantErr: errVeto},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "inbox.json")
			if tt.initial != nil {
				if err := os.WriteFile(path, tt.initial, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			err := WriteFile(path, tt.data, 0o600, Options{BeforeCommit: tt.before})
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("WriteFile error = %v; want %v", err, tt.wantErr)
			}
			got, rerr := os.ReadFile(path)
			switch {
			case tt.want == nil && !errors.Is(rerr, fs.ErrNotExist):
				t.Errorf("after WriteFile, ReadFile = %q, %v; want not exist", got, rerr)
			case tt.want != nil && (rerr != nil || string(got) != string(tt.want)):
				t.Errorf("after WriteFile, ReadFile = %q, %v; want %q", got, rerr, tt.want)
			}
			assertNoTemps(t, dir)
		})
	}
}

func TestWriteFileMissingDir(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope", "inbox.json")
	err := WriteFile(path, []byte("[]"), 0o644, Options{})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("WriteFile into a missing dir error = %v; want fs.ErrNotExist", err)
	}
}

func TestWriteFileRenameFailureRemovesTemp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "inbox.json")
	// A non-empty directory at the target makes the final rename fail.
	if err := os.MkdirAll(filepath.Join(path, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, []byte("[]"), 0o644, Options{}); err == nil {
		t.Fatalf("WriteFile over a non-empty directory error = nil; want an error")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("entries after failed WriteFile = %v; want only the target directory", entries)
	}
}

func TestStat(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "inbox.json")

	missing, err := Stat(path)
	if err != nil || missing != (Identity{}) {
		t.Fatalf("Stat(missing) = %+v, %v; want zero Identity, nil", missing, err)
	}

	if err := WriteFile(path, []byte(`[1]`), 0o644, Options{}); err != nil {
		t.Fatal(err)
	}
	first, err := Stat(path)
	if err != nil || !first.Exists || first.Size != 3 || first.Ino == 0 {
		t.Fatalf("Stat(existing) = %+v, %v; want Exists, Size 3, an inode", first, err)
	}
	again, err := Stat(path)
	if err != nil || again != first {
		t.Errorf("Stat(unchanged) = %+v, %v; want %+v", again, err, first)
	}

	// A rename-over with identical content and mtime is still a new file.
	mtime := time.Unix(0, first.MtimeNs)
	if err := WriteFile(path, []byte(`[1]`), 0o644, Options{BeforeCommit: func() error {
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	replaced, err := Stat(path)
	if err != nil || replaced == first {
		t.Errorf("Stat(after rename-over) = %+v, %v; want an Identity different from %+v", replaced, err, first)
	}

	// An in-place rewrite that restores size and mtime still changes ctime.
	if err := os.WriteFile(path, []byte(`[2]`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	rewritten, err := Stat(path)
	if err != nil || rewritten == replaced {
		t.Errorf("Stat(after in-place rewrite) = %+v, %v; want an Identity different from %+v", rewritten, err, replaced)
	}
}

// TestCompareAndSwap shows the intended use of Identity with BeforeCommit.
func TestCompareAndSwap(t *testing.T) {
	errConflict := errors.New("conflict")
	dir := t.TempDir()
	path := filepath.Join(dir, "inbox.json")
	if err := WriteFile(path, []byte(`[]`), 0o644, Options{}); err != nil {
		t.Fatal(err)
	}
	read, err := Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	// Another writer commits between our read and our commit.
	if err := WriteFile(path, []byte(`["theirs"]`), 0o644, Options{}); err != nil {
		t.Fatal(err)
	}
	cas := func() error {
		now, err := Stat(path)
		if err != nil {
			return err
		}
		if now != read {
			return errConflict
		}
		return nil
	}
	if err := WriteFile(path, []byte(`["ours"]`), 0o644, Options{BeforeCommit: cas}); !errors.Is(err, errConflict) {
		t.Errorf("WriteFile with stale identity error = %v; want %v", err, errConflict)
	}
	if got, _ := os.ReadFile(path); string(got) != `["theirs"]` {
		t.Errorf("content after refused commit = %q; want %q", got, `["theirs"]`)
	}
}

func assertNoTemps(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if isTempName(e.Name(), "inbox.json") {
			t.Errorf("leftover temp file %s", e.Name())
		}
	}
}

// AfterCommit runs once the new content is in place (and the temp file
// gone), and not at all when the write is abandoned before the rename.
func TestWriteFileAfterCommit(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "task.json")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	var seen []string
	after := func() {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("AfterCommit: %v", err)
		}
		entries, _ := os.ReadDir(dir)
		seen = append(seen, fmt.Sprintf("%s/%d", b, len(entries)))
	}
	if err := WriteFile(path, []byte("new"), 0o644, Options{AfterCommit: after}); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1 || seen[0] != "new/1" {
		t.Errorf("AfterCommit saw %q; want once, the new content and no temp file beside it", seen)
	}
	seen = nil
	veto := errors.New("veto")
	if err := WriteFile(path, []byte("newer"), 0o644, Options{BeforeCommit: func() error { return veto }, AfterCommit: after}); !errors.Is(err, veto) {
		t.Fatalf("vetoed write: %v", err)
	}
	if err := WriteFile(filepath.Join(dir, "no", "such", "dir"), []byte("x"), 0o644, Options{AfterCommit: after}); err == nil {
		t.Fatal("a write into a missing folder succeeded")
	}
	if len(seen) != 0 {
		t.Errorf("AfterCommit ran for abandoned writes: %q", seen)
	}
}
