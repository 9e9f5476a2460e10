// Package usagecmd is `troupe usage`: what a session's agents spent, from
// its ledger.
package usagecmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/troupe-dev/troupe/cli"

	"github.com/spf13/cobra"

	"github.com/troupe-dev/troupe/budget"
	"github.com/troupe-dev/troupe/budget/ledger"
	"github.com/troupe-dev/troupe/internal/termtext"
	"github.com/troupe-dev/troupe/session/streamjson"
	"github.com/troupe-dev/troupe/transcript"
)

// usageCommand is `troupe usage`.
// app is the shared state of the command line, with this package's
// commands as its methods.
type app struct{ *cli.App }

// New returns the command, bound to the command line's shared state.
func New(c *cli.App) *cobra.Command { return (&app{c}).usageCommand() }

func (a *app) usageCommand() *cobra.Command {
	var session string
	cmd := &cobra.Command{
		Use:   "usage",
		Short: "Print what a session spent: tokens and cost by agent and by model",
		Long: `troupe usage sums the usage ledger of a session (<home>/sessions/<id>/usage.ndjson,
one line per model call of the lead, its teammates and their sub-agents):
tokens and cost in US dollars at the prices of the time, by agent and by
model. Without --session it reads the newest session that has a ledger.
Models without a price (settings: modelPrices) count their tokens, not
their cost, and are named. --json prints the summary as one object.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			home, err := a.Home()
			if err != nil {
				return err
			}
			dir, err := usageDir(home, session)
			if err != nil {
				return err
			}
			es, err := ledger.Read(dir)
			if err != nil {
				return err
			}
			id := filepath.Base(dir)
			s := ledger.Summarize(es)
			if a.JSON {
				return json.NewEncoder(a.Stdout).Encode(Report{Session: id, Calls: s.Total.Calls,
					Total: streamjson.SpendLine(s.Total), ByAgent: streamjson.SpendLines(s.ByAgent), ByModel: streamjson.SpendLines(s.ByModel),
					First: timeOrNil(s.First), Last: timeOrNil(s.Last)})
			}
			a.printUsage(id, s)
			return nil
		},
	}
	cmd.Flags().StringVar(&session, "session", "", "the session `ID` (default: the newest with a usage ledger)")
	return cmd
}

// Report is `troupe usage --json`.
type Report struct {
	Session string                      `json:"session_id"`
	Calls   int                         `json:"calls"`
	Total   streamjson.Spend            `json:"total"`
	ByAgent map[string]streamjson.Spend `json:"by_agent"`
	ByModel map[string]streamjson.Spend `json:"by_model"`
	First   *time.Time                  `json:"first_call,omitempty"`
	Last    *time.Time                  `json:"last_call,omitempty"`
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// usageDir returns the folder of session under home, or the newest
// session folder with a ledger when session is "".
func usageDir(home, session string) (string, error) {
	if session != "" {
		if strings.ContainsAny(session, `/\`) || session == "." || session == ".." {
			return "", cli.Usagef("--session %q: not a session id", session)
		}
		dir := transcript.Dir(home, session)
		if _, err := os.Stat(dir); err != nil {
			return "", fmt.Errorf("no session %q in %s", session, filepath.Dir(dir))
		}
		return dir, nil
	}
	root := filepath.Join(home, "sessions")
	ents, err := os.ReadDir(root)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	var best string
	var bestTime time.Time
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		st, err := os.Stat(filepath.Join(root, e.Name(), ledger.FileName))
		if err == nil && st.ModTime().After(bestTime) {
			best, bestTime = filepath.Join(root, e.Name()), st.ModTime()
		}
	}
	if best == "" {
		return "", fmt.Errorf("no session with a usage ledger in %s", root)
	}
	return best, nil
}

func (a *app) printUsage(id string, s ledger.Summary) {
	fmt.Fprintf(a.Stdout, "Session %s: %d model call(s), %s tokens, %s\n", termtext.Line(id), s.Total.Calls,
		thousands(s.Total.Tokens()), usdText(s.Total))
	if s.Total.Calls == 0 {
		return
	}
	tw := tabwriter.NewWriter(a.Stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nAGENT\tCALLS\tINPUT\tCACHE READ\tCACHE WRITE\tOUTPUT\tCOST")
	for _, name := range s.Agents() {
		usageRow(tw, name, s.ByAgent[name])
	}
	fmt.Fprintln(tw, "\nMODEL\tCALLS\tINPUT\tCACHE READ\tCACHE WRITE\tOUTPUT\tCOST")
	for _, name := range slices.Sorted(maps.Keys(s.ByModel)) {
		usageRow(tw, name, s.ByModel[name])
	}
	tw.Flush()
	if len(s.Total.Unpriced) > 0 {
		fmt.Fprintf(a.Stdout, "\nNo price for %s: their tokens count, their cost does not (settings: modelPrices).\n",
			termtext.Line(strings.Join(s.Total.Unpriced, ", ")))
	}
}

func usageRow(tw *tabwriter.Writer, name string, s budget.Spend) {
	u := s.Usage
	fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\n", termtext.Line(name), s.Calls, thousands(u.InputTokens), thousands(u.CacheReadTokens),
		thousands(u.CacheWriteTokens), thousands(u.OutputTokens), usdText(s))
}

// usdText prints s's cost, marked "+?" when some of it has no price.
func usdText(s budget.Spend) string {
	d := fmt.Sprintf("$%.4f", s.USD)
	if len(s.Unpriced) > 0 {
		d += " (+ unpriced)"
	}
	return d
}

// thousands prints n with thousands separators.
func thousands(n int64) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}
