package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/troupe-dev/troupe/internal/termtext"
)

// PrintJSON writes v to stdout as one indented JSON document.
func (a *App) PrintJSON(v any) error {
	enc := json.NewEncoder(a.Stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// Table returns a tabwriter on stdout for aligned columns; the caller
// flushes it.
func (a *App) Table() *tabwriter.Writer {
	return tabwriter.NewWriter(a.Stdout, 0, 0, 2, ' ', 0)
}

// Row writes one table row, with tabs and newlines in the cells flattened.
func Row(w io.Writer, cells ...string) {
	for i, c := range cells {
		cells[i] = Cell(c)
	}
	fmt.Fprintln(w, strings.Join(cells, "\t"))
}

// Cell makes s fit in one table cell, with its control characters shown
// as escapes (stored text is untrusted); an empty cell reads "-".
func Cell(s string) string {
	if s == "" {
		return "-"
	}
	return termtext.Line(strings.NewReplacer("\t", " ", "\r\n", " ", "\n", " ", "\r", " ").Replace(s))
}

// LocalTime formats t in local time; the zero time reads "-".
func LocalTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

// EpochTime formats a stored epoch-millisecond time in local time.
func EpochTime(ms int64) string {
	if ms == 0 {
		return "-"
	}
	return LocalTime(time.UnixMilli(ms))
}

// MetadataLines returns "key=value" for each metadata key, sorted.
func MetadataLines(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k + "=" + string(m[k])
	}
	return out
}

// IDs joins task ids for display.
func IDs(list []string) string { return strings.Join(list, ",") }
