package filetool

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/troupe-dev/troupe/tool"
)

// errConfined marks a write that Config.Confine refused.
var errConfined = errors.New("refused")

// openedPath returns the real path of the open file f: on Linux what
// /proc/self/fd says the descriptor is, elsewhere f's name with its links
// resolved, checked to be the same file as f.
func openedPath(f *os.File) (string, error) {
	if p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd()))); err == nil && filepath.IsAbs(p) {
		return p, nil
	}
	p, err := filepath.EvalSymlinks(f.Name())
	if err != nil {
		return "", err
	}
	a, err := f.Stat()
	if err != nil {
		return "", err
	}
	b, err := os.Stat(p)
	if err != nil {
		return "", err
	}
	if !os.SameFile(a, b) {
		return "", fmt.Errorf("%s changed while it was opened", f.Name())
	}
	return p, nil
}

// confineErr asks Confine, if set, about real, the real path of what the
// tool name opened (or will write) for the path abs it was given. Paths
// without links (real == abs) need no second look: they are what the
// permission layer judged.
func (c Config) confineErr(name, abs, real string) error {
	if c.Confine == nil || real == abs {
		return nil
	}
	if err := c.Confine(name, abs, real); err != nil {
		return fmt.Errorf("%w: %s really is %s: %v", errConfined, abs, real, err)
	}
	return nil
}

// confineFile checks the open file f, opened by the tool name for abs,
// with Confine; a refusal is the call's error result.
func (c Config) confineFile(name, abs string, f *os.File) (tool.Result, bool) {
	if c.Confine == nil {
		return tool.Result{}, true
	}
	real, err := openedPath(f)
	if err != nil {
		return tool.Errorf("%s: refused: cannot tell where %s really is: %v", name, abs, unwrapPath(err)), false
	}
	if err := c.confineErr(name, abs, real); err != nil {
		return tool.Errorf("%s: %v", name, err), false
	}
	return tool.Result{}, true
}

// withheld reports whether Withhold keeps abs out of search results.
func (c Config) withheld(abs string) bool {
	return c.Withhold != nil && c.Withhold(abs)
}

// withheldNote notes paths left out of a search's results.
func withheldNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("\n[%s withheld by permission deny rules.]", plural(n, "path"))
}

// readConfined reads the whole file abs for the tool name, checking what
// it opened with Confine.
func readConfined(c Config, name, abs string) ([]byte, tool.Result, bool) {
	f, err := os.Open(abs)
	if err != nil {
		return nil, statErr(name, abs, err), false
	}
	defer f.Close()
	if res, ok := c.confineFile(name, abs, f); !ok {
		return nil, res, false
	}
	// One buffer of the file's size (and a byte to see it end), not the
	// doublings of io.ReadAll: a large file is in memory once.
	var data []byte
	if st, err := f.Stat(); err == nil && st.Size() > 0 && st.Size() < 1<<31 {
		data = make([]byte, 0, st.Size()+1)
	}
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, tool.Errorf("%s: cannot read %s: %v", name, abs, unwrapPath(err)), false
		}
	}
	return data, tool.Result{}, true
}

// confineDir checks the folder abs that the tool name searches with
// Confine, opening it to learn where it really is.
func confineDir(c Config, name, abs string) (tool.Result, bool) {
	if c.Confine == nil {
		return tool.Result{}, true
	}
	d, err := os.Open(abs)
	if err != nil {
		return tool.Errorf("%s: cannot access %s: %v", name, abs, unwrapPath(err)), false
	}
	defer d.Close()
	return c.confineFile(name, abs, d)
}
