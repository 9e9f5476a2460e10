package atomicfile

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestIsTempName(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"inbox.json.tmp.0a1b2c3d", true},
		{"inbox.json.tmp.ff", true},
		{"inbox.json.tmp.", false},
		{"inbox.json.tmp.0A1B2C3D", false},
		{"inbox.json.tmp.backup", false},
		{"inbox.json", false},
		{"other.json.tmp.0a1b2c3d", false},
		{"inbox.json.lock", false},
	}
	for _, tt := range tests {
		if got := isTempName(tt.name, "inbox.json"); got != tt.want {
			t.Errorf("isTempName(%q, %q) = %v; want %v", tt.name, "inbox.json", got, tt.want)
		}
	}
}

func TestSweepTemps(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	old := now.Add(-2 * time.Hour)
	files := []struct {
		name  string
		mtime time.Time
		keep  bool
	}{
		{"inbox.json", old, true},
		{"inbox.json.tmp.0a1b2c3d", old, false},
		{"inbox.json.tmp.deadbeef", old, false},
		{"inbox.json.tmp.12345678", now, true},   // young: maybe a live writer
		{"inbox.json.tmp.notahex1", old, true},   // not our pattern
		{"other.json.tmp.0a1b2c3d", old, true},   // another file's temp
		{"inbox.json.tmp.cafebabe.x", old, true}, // not our pattern
	}
	for _, f := range files {
		p := filepath.Join(dir, f.name)
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, f.mtime, f.mtime); err != nil {
			t.Fatal(err)
		}
	}
	// A directory with a temp-like name is never removed.
	if err := os.Mkdir(filepath.Join(dir, "inbox.json.tmp.abcdef01"), 0o755); err != nil {
		t.Fatal(err)
	}

	removed, err := SweepTemps(dir, "inbox.json", time.Hour, now)
	if err != nil || removed != 2 {
		t.Fatalf("SweepTemps = %d, %v; want 2, nil", removed, err)
	}
	var want []string
	for _, f := range files {
		if f.keep {
			want = append(want, f.name)
		}
	}
	want = append(want, "inbox.json.tmp.abcdef01")
	slices.Sort(want)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if !slices.Equal(got, want) {
		t.Errorf("entries after SweepTemps = %q; want %q", got, want)
	}
}

func TestSweepTempsErrors(t *testing.T) {
	tests := []struct {
		name string
		dir  string
		base string
	}{
		{"missing dir", filepath.Join(t.TempDir(), "nope"), "inbox.json"},
		{"empty base", t.TempDir(), ""},
		{"base with separator", t.TempDir(), "a/b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if n, err := SweepTemps(tt.dir, tt.base, 0, time.Now()); err == nil {
				t.Errorf("SweepTemps(%q, %q) = %d, nil; want an error", tt.dir, tt.base, n)
			}
		})
	}
}

func TestSweepDir(t *testing.T) {
	sweeps := []struct {
		name  string
		sweep func(dir string, now time.Time) (int, error)
	}{
		{"SweepDir", func(dir string, now time.Time) (int, error) { return SweepDir(dir, time.Minute, now) }},
		{"SweepEntries", func(dir string, now time.Time) (int, error) {
			entries, err := os.ReadDir(dir)
			if err != nil {
				return 0, err
			}
			return SweepEntries(dir, entries, time.Minute, now)
		}},
	}
	for _, sw := range sweeps {
		t.Run(sw.name, func(t *testing.T) {
			dir := t.TempDir()
			now := time.Now()
			old := now.Add(-2 * time.Hour)
			files := []struct {
				name  string
				mtime time.Time
				keep  bool
			}{
				{"3.json", old, true},
				{"3.json.tmp.0a1b2c3d", old, false},
				{"config.json.tmp.deadbeef", old, false},
				{"w.json.tmp.123456789", old, false}, // os.CreateTemp's decimal suffix
				{"4.json.tmp.12345678", now, true},   // young: maybe a live writer
				{".tmp.0a1b2c3d", old, true},         // no file name before it
				{"4.json.tmp.backup", old, true},     // not our pattern
			}
			for _, f := range files {
				p := filepath.Join(dir, f.name)
				if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Chtimes(p, f.mtime, f.mtime); err != nil {
					t.Fatal(err)
				}
			}
			n, err := sw.sweep(dir, now)
			if err != nil || n != 3 {
				t.Errorf("%s = %d, %v; want 3, nil", sw.name, n, err)
			}
			for _, f := range files {
				_, err := os.Lstat(filepath.Join(dir, f.name))
				if kept := err == nil; kept != f.keep {
					t.Errorf("after %s, %s kept = %v; want %v", sw.name, f.name, kept, f.keep)
				}
			}
		})
	}
}
