package filetool

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/tool"
)

//go:embed read.md
var readDescription string

const readSchema = `{
  "type": "object",
  "properties": {
    "file_path": {"type": "string", "description": "The path of the file to read: absolute, or relative to the working directory"},
    "offset": {"type": "integer", "minimum": 1, "description": "The line number to start reading from (1-based). Only provide if the file is too large to read at once"},
    "limit": {"type": "integer", "minimum": 1, "description": "The number of lines to read. Only provide if the file is too large to read at once"}
  },
  "required": ["file_path"],
  "additionalProperties": false
}`

// Read is the Read tool: it shows a text file, or a range of its lines,
// numbered like cat -n, or a PNG, JPEG, GIF or WebP image as a picture
// (up to Config.MaxImageBytes and 8000 pixels a side).
type Read struct {
	cfg   Config
	desc  string
	index lineIndexes // where the lines of large files start (readindex.go)
}

var _ tool.Tool = (*Read)(nil)

// NewRead returns the Read tool.
func NewRead(cfg Config) *Read {
	cfg = cfg.withDefaults()
	desc := strings.NewReplacer("{{max_lines}}", fmt.Sprint(cfg.MaxLines),
		"{{max_bytes}}", size(cfg.MaxReadBytes), "{{max_image}}", size(cfg.MaxImageBytes)).Replace(readDescription)
	return &Read{cfg: cfg, desc: desc}
}

type readInput struct {
	FilePath string `json:"file_path"`
	Offset   int    `json:"offset"`
	Limit    int    `json:"limit"`
}

// Spec implements tool.Tool.
func (r *Read) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "Read", Description: r.desc, InputSchema: json.RawMessage(readSchema)}
}

// ReadOnly implements tool.Tool: a Read that decodes changes nothing.
func (*Read) ReadOnly(input json.RawMessage) bool {
	var in readInput
	_, ok := tool.Decode("Read", input, &in)
	return ok
}

// Run implements tool.Tool.
func (r *Read) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	var in readInput
	if res, ok := tool.Decode("Read", call.Input, &in); !ok {
		return res, nil
	}
	switch {
	case in.FilePath == "":
		return tool.Errorf("Read: file_path is required"), nil
	case in.Offset < 0:
		return tool.Errorf("Read: offset must be a line number from 1, got %d", in.Offset), nil
	case in.Limit < 0:
		return tool.Errorf("Read: limit must be a positive number of lines, got %d", in.Limit), nil
	}
	first, limit := max(in.Offset, 1), in.Limit
	if limit == 0 {
		limit = r.cfg.MaxLines
	}
	abs := r.cfg.abs(in.FilePath)
	st, err := os.Stat(abs)
	if err != nil {
		return statErr("Read", abs, err), nil
	}
	if st.IsDir() {
		return tool.Errorf("Read: %s is a directory; use Glob to list its files", abs), nil
	}
	if !st.Mode().IsRegular() {
		return tool.Errorf("Read: %s is not a regular file (%s)", abs, st.Mode().Type()), nil
	}
	f, err := os.Open(abs)
	if err != nil {
		return statErr("Read", abs, err), nil
	}
	defer f.Close()
	if res, ok := r.cfg.confineFile("Read", abs, f); !ok {
		return res, nil
	}
	if in.Offset == 0 && in.Limit == 0 && strings.EqualFold(filepath.Ext(abs), ".ipynb") && st.Size() <= maxNotebook {
		// A notebook is shown as its cells; one that does not parse,
		// or a range of lines, as its JSON text.
		if data, err := io.ReadAll(f); err == nil {
			if nb, err := ParseNotebook(data); err == nil {
				return renderNotebook(abs, nb, r.cfg.MaxReadBytes, r.cfg.MaxImageBytes), nil
			}
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return tool.Errorf("Read: cannot read %s: %v", abs, unwrapPath(err)), nil
		}
	}

	head := make([]byte, sniffLen)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return tool.Errorf("Read: cannot read %s: %v", abs, unwrapPath(err)), nil
	}
	head = head[:n]
	if n == 0 {
		return tool.Result{Content: fmt.Sprintf("(%s exists but is empty)", abs)}, nil
	}
	if mt := imageType(head); mt != "" {
		return readImage(abs, io.MultiReader(bytes.NewReader(head), f), st.Size(), r.cfg.MaxImageBytes, mt), nil
	}
	if looksBinary(head, true) {
		if imageExt(abs) {
			return tool.Errorf("Read: %s has the name of an image but is not a PNG, JPEG, GIF or WebP picture (%s of binary data)", abs, size(st.Size())), nil
		}
		return tool.Errorf("Read: %s looks like a binary file (%s; it has NUL bytes, or mostly bytes that are not text); Read shows text files and PNG, JPEG, GIF and WebP images only", abs, size(st.Size())), nil
	}
	sc := &lineScan{idx: r.index.get(abs, st)}
	if _, known := sc.idx.total(); sc.idx != nil && !known {
		// A large file read for the first time: count its lines on
		// every core first, then start next to the lines to show.
		err := indexLines(ctx, f, st.Size(), sc.idx)
		switch {
		case ctx.Err() != nil:
			return tool.Result{}, ctx.Err()
		case errors.Is(err, errShrank):
			return tool.Errorf("Read: cannot read %s: %v; read it again", abs, err), nil
		}
		// Another failure (a file system that cannot map files) leaves
		// the count to the reading below.
		if _, err := f.Seek(int64(len(head)), io.SeekStart); err != nil {
			return tool.Errorf("Read: cannot read %s: %v", abs, unwrapPath(err)), nil
		}
	}
	if m, ok := sc.idx.before(first - 2); ok && m.off > 0 {
		// A Read of this file found where its lines are: start there.
		// A mark may fall inside a line, so the one taken has a newline
		// between it and line first, which starts after that newline.
		if _, err := f.Seek(m.off, io.SeekStart); err != nil {
			return tool.Errorf("Read: cannot read %s: %v", abs, unwrapPath(err)), nil
		}
		sc.off, sc.lines = m.off, m.lines
		return r.lines(ctx, abs, sc, f, first, limit)
	}
	return r.lines(ctx, abs, sc, io.MultiReader(bytes.NewReader(head), f), first, limit)
}

// lines formats lines first..first+limit-1 of src, stopping early at the
// byte budget, and counts the lines of the whole file for the notes. The
// lines before and after the ones shown are only counted, with
// bytes.Count over large buffers, so that reading near the end of a large
// file costs little more than reading through it once.
func (r *Read) lines(ctx context.Context, abs string, sc *lineScan, src io.Reader, first, limit int) (tool.Result, error) {
	sc.src = src
	br := bufio.NewReaderSize(sc, 1<<20)
	sc.br = br
	start := sc.lines // newlines before where src starts
	skipped, err := skipLines(ctx, br, first-1-start, sc.mark)
	lineNo := start + skipped
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, err
		}
		return tool.Errorf("Read: cannot read %s: %v", abs, unwrapPath(err)), nil
	}
	var out strings.Builder
	var buf []byte
	last, stopped := 0, false
	var invalid []int // lines shown with bytes that are not UTF-8
	for lineNo < first-1+limit && !stopped {
		var full int
		buf, full, err = readLine(br, buf[:0], maxLineLen)
		if full == 0 && errors.Is(err, io.EOF) {
			break
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return tool.Errorf("Read: cannot read %s: %v", abs, unwrapPath(err)), nil
		}
		lineNo++
		if lineNo < first {
			continue // the partial last line skipLines counted
		}
		text := string(buf)
		if !utf8.ValidString(text) {
			text = strings.ToValidUTF8(text, "\ufffd")
			invalid = append(invalid, lineNo)
		}
		if full > len(buf) {
			text += fmt.Sprintf(" ... [line truncated: %s more]", size(int64(full-len(buf))))
		}
		line := fmt.Sprintf("%6d\t%s\n", lineNo, text)
		if int64(out.Len()+len(line)) > r.cfg.MaxReadBytes && lineNo > first {
			stopped = true
			continue
		}
		out.WriteString(line)
		last = lineNo
	}
	total, known := sc.idx.total()
	if !known {
		sc.lines = lineNo
		rest, err := skipLines(ctx, br, -1, sc.mark)
		if err != nil {
			if ctx.Err() != nil {
				return tool.Result{}, err
			}
			return tool.Errorf("Read: cannot read %s: %v", abs, unwrapPath(err)), nil
		}
		total = lineNo + rest
		sc.idx.setTotal(total)
	}
	if first > total {
		return tool.Errorf("Read: offset %d is past the end of %s, which has %s", first, abs, plural(total, "line")), nil
	}
	if len(invalid) > 0 {
		out.WriteString(invalidNote(invalid))
	}
	switch {
	case stopped:
		fmt.Fprintf(&out, "\n[Output stopped after line %d of %d: one Read returns at most %s. Continue with offset=%d (and a smaller limit), or use Grep to find the lines you need.]",
			last, total, size(r.cfg.MaxReadBytes), last+1)
	case last < total:
		fmt.Fprintf(&out, "\n[Showing lines %d-%d of %d. Continue with offset=%d.]", first, last, total, last+1)
	}
	return tool.Result{Content: out.String()}, nil
}

// skipLines reads past n lines of br (all of them when n < 0) and returns
// how many it passed: a last line without a newline counts, and is then
// read whole. It counts newlines with bytes.Count on the reader's whole
// buffer at a time, checking ctx between buffers; mark, when set, is told
// the count before each buffer.
func skipLines(ctx context.Context, br *bufio.Reader, n int, mark func(count int)) (int, error) {
	count, partial := 0, false
	for n < 0 || count < n {
		if mark != nil {
			mark(count)
		}
		if err := ctx.Err(); err != nil {
			return count, err
		}
		if br.Buffered() == 0 {
			if _, err := br.Peek(1); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				return count, err
			}
		}
		chunk, _ := br.Peek(br.Buffered())
		c := bytes.Count(chunk, []byte("\n"))
		if n < 0 || count+c < n {
			count += c
			partial = chunk[len(chunk)-1] != '\n'
			br.Discard(len(chunk))
			continue
		}
		pos := 0
		for ; count < n; count++ {
			pos += bytes.IndexByte(chunk[pos:], '\n') + 1
		}
		br.Discard(pos)
		return count, nil
	}
	if partial {
		count++
	}
	return count, nil
}

// readLine reads one line from br into buf (without its "\n" or "\r\n"),
// keeping at most max bytes of it. full is the line's whole length; it is
// 0 with err io.EOF at the end of input. When full > len(line) the line
// was cut.
func readLine(br *bufio.Reader, buf []byte, max int) (line []byte, full int, err error) {
	raw, nl := 0, false
	for {
		chunk, err := br.ReadSlice('\n')
		raw += len(chunk)
		if room := max + 2 - len(buf); room > 0 { // +2: room for a "\r\n" to strip
			buf = append(buf, chunk[:min(room, len(chunk))]...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return buf, raw, err
		}
		if raw == 0 {
			return buf, 0, io.EOF
		}
		nl = err == nil
		break
	}
	full = raw
	if nl {
		full--
		if len(buf) == raw {
			buf = buf[:len(buf)-1]
		}
	}
	if len(buf) == full && full > 0 && buf[full-1] == '\r' {
		buf = buf[:full-1]
		full--
	}
	if len(buf) > max {
		buf = trimIncompleteRune(buf[:max])
	}
	return buf, full, nil
}

// invalidNote says which shown lines had bytes that are not valid UTF-8.
func invalidNote(lines []int) string {
	which := fmt.Sprintf("Line %d has", lines[0])
	if len(lines) > 1 {
		nums := make([]string, 0, 5)
		for _, n := range lines[:min(len(lines), 5)] {
			nums = append(nums, fmt.Sprint(n))
		}
		which = "Lines " + strings.Join(nums, ", ")
		if len(lines) > 5 {
			which += fmt.Sprintf(" and %d more", len(lines)-5)
		}
		which += " have"
	}
	return "\n[" + which + " bytes that are not valid UTF-8 (the file may be in another encoding, such as Latin-1), shown as \ufffd: Edit cannot match those bytes, so match the text around them.]"
}
