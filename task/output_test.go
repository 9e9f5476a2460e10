package task

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestOpenOutputRefusesSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "victim")
	os.WriteFile(target, []byte("precious"), 0o644)
	link := filepath.Join(dir, "b12345678.output")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	o, err := OpenOutput(link, 0)
	if !errors.Is(err, ErrSymlink) {
		if o != nil {
			o.Close()
		}
		t.Fatalf("OpenOutput(symlink) = %v; want ErrSymlink", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "precious" {
		t.Errorf("target = %q; want it untouched", b)
	}
	// A dangling symlink must not create its target either.
	dangling := filepath.Join(dir, "dangling")
	os.Symlink(filepath.Join(dir, "created"), dangling)
	if _, err := OpenOutput(dangling, 0); !errors.Is(err, ErrSymlink) {
		t.Errorf("OpenOutput(dangling symlink) = %v; want ErrSymlink", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "created")); err == nil {
		t.Error("OpenOutput created the symlink's target")
	}
}

func TestOpenOutputMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "o")
	o, err := OpenOutput(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	o.Close()
	fi, _ := os.Stat(path)
	if m := fi.Mode().Perm(); m != 0o600 {
		t.Errorf("mode = %v; want 0600", m)
	}
}

// filler writes n bytes of 13-byte lines ("filler-line\n" and a digit)
// to w, quickly.
func filler(t testing.TB, w io.Writer, n int) {
	t.Helper()
	block := bytes.Repeat([]byte("filler line.\n"), 13<<12/13) // 13 * 4096 bytes
	for n > 0 {
		k := min(n, len(block))
		if _, err := w.Write(block[:k]); err != nil {
			t.Fatal(err)
		}
		n -= k
	}
}

// numbered writes n lines "line 0000001\n"... to w, 13 bytes each.
func numbered(t testing.TB, w io.Writer, from, n int) {
	t.Helper()
	var buf []byte
	for k := from; k < from+n; k++ {
		buf = fmt.Appendf(buf, "line %07d\n", k)
	}
	if _, err := w.Write(buf); err != nil {
		t.Fatal(err)
	}
}

// allocated returns the bytes of disk the file at path holds.
func allocated(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Blocks * 512
}

// canPunch skips the test where the temporary folder's file system cannot
// punch holes (the cap then keeps the head: TestOutputCapKeepsHeadWhereItCannotPunch).
func canPunch(t *testing.T, dir string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the cap keeps the end only on Linux")
	}
	f, err := os.CreateTemp(dir, "punch")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.Write(make([]byte, 2*punchAlign))
	if err := punchHead(f, 0, punchAlign); err != nil {
		t.Skipf("%s cannot punch holes: %v", dir, err)
	}
}

// TestOutputCapKeepsTail writes 20 MB through a 1 MiB cap: the file keeps
// its size and offsets, holds about the cap on disk, and its end (the last
// line written) is whole, read from where the kept part starts.
func TestOutputCapKeepsTail(t *testing.T) {
	dir := t.TempDir()
	canPunch(t, dir)
	path := filepath.Join(dir, "o")
	const max = 1 << 20
	o, err := OpenOutput(path, max)
	if err != nil {
		t.Fatal(err)
	}
	const lines = 20 << 20 / 13
	filler(t, o, (lines/2)*13)
	if err := o.Capture(pipeOf(t, func(w io.Writer) {
		filler(t, w, (lines-lines/2-1000)*13)
		numbered(t, w, lines-1000, 1000)
	})); err != nil {
		t.Fatal(err)
	}
	o.Close()
	if got, want := o.Size(), int64(lines*13); got != want {
		t.Errorf("Size = %d; want %d (every byte counted, dropped ones too)", got, want)
	}
	if a := allocated(t, path); a > max+punchAlign+64<<10 {
		t.Errorf("the file holds %d bytes of disk; want about the cap, %d", a, max)
	}
	rd, err := ReadOutputAt(path, 0, 64)
	if err != nil {
		t.Fatal(err)
	}
	if rd.Start == 0 || rd.Offset != rd.Start || rd.Size != int64(lines*13) {
		t.Fatalf("ReadOutputAt(0) = offset %d, start %d, size %d; want it moved to the kept part's start", rd.Offset, rd.Start, rd.Size)
	}
	if kept := rd.Size - rd.Start; kept < max-max/8 || kept > max {
		t.Errorf("kept %d bytes; want between 7/8 of the cap and the cap", kept)
	}
	if bytes.IndexByte(rd.Data, 0) >= 0 {
		t.Errorf("read zeros of the dropped part: %q", rd.Data)
	}
	tail, err := ReadOutputTail(path, 2, 4096)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("line %07d\nline %07d\n", lines-2, lines-1)
	if string(tail.Data) != want || tail.End() != tail.Size {
		t.Errorf("tail = %q (offset %d of %d); want %q", tail.Data, tail.Offset, tail.Size, want)
	}
	// Opened again (a resumed writer), the kept part's start is known.
	o2, err := OpenOutput(path, max)
	if err != nil {
		t.Fatal(err)
	}
	defer o2.Close()
	if o2.start != rd.Start || o2.Size() != rd.Size {
		t.Errorf("reopened: start %d, size %d; want %d, %d", o2.start, o2.Size(), rd.Start, rd.Size)
	}
}

// pipeOf returns the read end of a pipe that write fills, then closes.
func pipeOf(t *testing.T, write func(io.Writer)) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		write(pw)
		pw.Close()
	}()
	return pr
}

// TestOutputCapKeepsHeadWhereItCannotPunch: where the head cannot be
// given back, the file keeps it, writes past the cap are dropped, and one
// marker says so.
func TestOutputCapKeepsHeadWhereItCannotPunch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "o")
	o, err := OpenOutput(path, 100)
	if err != nil {
		t.Fatal(err)
	}
	o.noPunch = func() bool { return true }
	chunk := bytes.Repeat([]byte("x"), punchAlign)
	for range 3 {
		if n, err := o.Write(chunk); n != len(chunk) || err != nil {
			t.Fatalf("Write = %d, %v; want %d, nil (the writer keeps running)", n, err, len(chunk))
		}
	}
	if err := o.Capture(strings.NewReader(strings.Repeat("y", 1000))); err != nil {
		t.Fatalf("Capture past the cap = %v", err)
	}
	o.Close()
	b, _ := os.ReadFile(path)
	want := strings.Repeat("x", 2*punchAlign) + TruncatedMarker(100)
	if string(b) != want {
		t.Errorf("file = %d bytes ending %q; want the head and the marker", len(b), b[max(0, len(b)-80):])
	}
}

func TestReadOutputByOffset(t *testing.T) {
	path := filepath.Join(t.TempDir(), "o")
	os.WriteFile(path, []byte("0123456789"), 0o600)
	tests := []struct {
		off, max int64
		want     string
	}{
		{0, 100, "0123456789"}, {3, 100, "3456789"}, {3, 2, "34"}, {10, 5, ""}, {20, 5, ""},
	}
	for _, tt := range tests {
		got, err := ReadOutput(path, tt.off, tt.max)
		if err != nil || string(got) != tt.want {
			t.Errorf("ReadOutput(%d, %d) = %q, %v; want %q", tt.off, tt.max, got, err, tt.want)
		}
	}
	link := path + ".link"
	os.Symlink(path, link)
	if _, err := ReadOutput(link, 0, 10); err == nil {
		t.Error("ReadOutput(symlink) = nil error; want a refusal")
	}
}

func TestOutputDir(t *testing.T) {
	temp := t.TempDir()
	dir, err := OutputDir(temp, "proj", "sess")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(temp, "troupe-"+strconv.Itoa(os.Getuid()), "proj", "sess", "tasks"); dir != want {
		t.Errorf("OutputDir = %q; want %q", dir, want)
	}
	for _, bad := range [][2]string{{"..", "s"}, {"p", "a/b"}, {"", "s"}} {
		if _, err := OutputDir(temp, bad[0], bad[1]); err == nil {
			t.Errorf("OutputDir(%q, %q) = nil error; want a refusal", bad[0], bad[1])
		}
	}
	// A planted symlink in place of the per-user folder is refused.
	temp2 := t.TempDir()
	os.Symlink(t.TempDir(), filepath.Join(temp2, "troupe-"+strconv.Itoa(os.Getuid())))
	if _, err := OutputDir(temp2, "p", "s"); err == nil {
		t.Error("OutputDir through a planted symlink = nil error; want a refusal")
	}
	// So is one in place of a folder below it: the project, the session or
	// the tasks folder.
	user := filepath.Join(temp, "troupe-"+strconv.Itoa(os.Getuid()))
	for _, rel := range []string{"p1", "p2/s", "p3/s/tasks"} {
		link := filepath.Join(user, rel)
		if err := os.MkdirAll(filepath.Dir(link), 0o700); err != nil {
			t.Fatal(err)
		}
		elsewhere := t.TempDir()
		if err := os.Symlink(elsewhere, link); err != nil {
			t.Fatal(err)
		}
		parts := strings.SplitN(rel+"/s/x", "/", 3)
		_, err := OutputDir(temp, parts[0], "s")
		if !errors.Is(err, ErrSymlink) || !strings.Contains(err.Error(), link) {
			t.Errorf("OutputDir with %s a symlink = %v; want ErrSymlink naming it", rel, err)
		}
		if des, _ := os.ReadDir(elsewhere); len(des) != 0 {
			t.Errorf("OutputDir wrote through the symlink %s", rel)
		}
	}
}

func TestReadOutputTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "o")
	tests := []struct {
		file  string
		lines int
		limit int64
		want  string
	}{
		{"a\nb\nc\n", 2, 100, "b\nc\n"},
		{"a\nb\nc", 2, 100, "b\nc"},        // a last line without its newline counts
		{"a\nb\nc\n", 9, 100, "a\nb\nc\n"}, // fewer lines than asked
		{"a\nb\nc\n", 0, 100, ""},
		{"", 3, 100, ""},
		{"aaaa\nbbbb\ncccc\n", 3, 8, "cccc\n"},   // cut at a line start within the limit
		{"aaaaaaaaaa\nbbbbbbbbbb", 1, 4, "bbbb"}, // no line start within: its last bytes
		{"a\n\n\n", 2, 100, "\n\n"},
	}
	for _, tt := range tests {
		os.WriteFile(path, []byte(tt.file), 0o600)
		rd, err := ReadOutputTail(path, tt.lines, tt.limit)
		if err != nil || string(rd.Data) != tt.want || rd.Size != int64(len(tt.file)) || rd.End() != rd.Size && tt.want != "" {
			t.Errorf("ReadOutputTail(%q, %d, %d) = %q at %d of %d, %v; want %q", tt.file, tt.lines, tt.limit, rd.Data, rd.Offset, rd.Size, err, tt.want)
		}
	}
	link := path + ".link"
	os.Symlink(path, link)
	if _, err := ReadOutputTail(link, 1, 10); !errors.Is(err, ErrSymlink) {
		t.Errorf("ReadOutputTail(symlink) = %v; want ErrSymlink", err)
	}
}

// TestSweepOutputs: session folders in which nothing was written for
// longer than the retention go, with their empty project folder; recent
// ones, the one kept, and a symlink stay.
func TestSweepOutputs(t *testing.T) {
	temp := t.TempDir()
	now := time.Now()
	old := now.Add(-8 * 24 * time.Hour)
	mk := func(project, session string, mod time.Time) string {
		dir, err := OutputDir(temp, project, session)
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(dir, "b1.output")
		os.WriteFile(f, []byte("out"), 0o600)
		for _, p := range []string{f, dir, filepath.Dir(dir)} {
			os.Chtimes(p, mod, mod)
		}
		return filepath.Dir(dir)
	}
	gone := mk("p1", "s-old", old)
	goneToo := mk("p2", "s-old", old)
	recent := mk("p1", "s-new", now)
	kept := mk("p1", "s-kept", old)
	// An old folder with one fresh file: still written to.
	live := mk("p1", "s-live", old)
	os.WriteFile(filepath.Join(live, "tasks", "b2.output"), nil, 0o600)
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "precious"), []byte("x"), 0o600)
	link := filepath.Join(filepath.Dir(gone), "s-link")
	os.Symlink(outside, link)

	removed, err := SweepOutputs(temp, now.Add(-7*24*time.Hour), kept)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(removed)
	if want := []string{gone, goneToo}; !slices.Equal(removed, want) {
		t.Errorf("removed %q; want %q", removed, want)
	}
	for _, p := range []string{recent, kept, live, link, filepath.Join(outside, "precious")} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s: %v; want it kept", p, err)
		}
	}
	if _, err := os.Lstat(filepath.Dir(goneToo)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("empty project folder: %v; want it removed", err)
	}
	if removed, err := SweepOutputs(t.TempDir(), now, ""); err != nil || removed != nil {
		t.Errorf("SweepOutputs(no per-user folder) = %v, %v; want nothing", removed, err)
	}
}

// FuzzReadOutputTail: whatever the output, the tail is its end, within
// the limit, and holds no more lines than asked; with room for them, it
// holds them all.
func FuzzReadOutputTail(f *testing.F) {
	f.Add([]byte("a\nb\nc\n"), 2, int64(100))
	f.Add([]byte("no newline at all"), 1, int64(4))
	f.Add([]byte("\n\n\n"), 5, int64(2))
	f.Add([]byte("x\x00y\nz"), 1, int64(3))
	f.Add([]byte(""), 0, int64(0))
	path := filepath.Join(f.TempDir(), "o")
	f.Fuzz(func(t *testing.T, data []byte, lines int, limit int64) {
		lines, limit = lines%64, limit%256
		if lines < 0 || limit < 0 {
			return
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		rd, err := ReadOutputTail(path, lines, limit)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasSuffix(data, rd.Data) || rd.Size != int64(len(data)) || int64(len(rd.Data)) > limit {
			t.Fatalf("tail %q of %q (lines %d, limit %d): not its end within the limit", rd.Data, data, lines, limit)
		}
		if len(rd.Data) > 0 && rd.End() != rd.Size {
			t.Fatalf("tail ends at %d of %d", rd.End(), rd.Size)
		}
		got := bytes.Count(bytes.TrimSuffix(rd.Data, []byte("\n")), []byte("\n")) + 1
		if len(rd.Data) > 0 && got > lines {
			t.Fatalf("tail %q has %d lines; asked %d", rd.Data, got, lines)
		}
		all := bytes.Count(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) + 1
		if int64(len(data)) <= limit && lines > 0 && len(data) > 0 && got != min(lines, all) {
			t.Fatalf("tail %q of %q has %d lines; want %d", rd.Data, data, got, min(lines, all))
		}
	})
}
