package mate

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/troupe-dev/troupe/cli"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/team"
)

// Identity is who a teammate process was started as, read from its raw
// command line: the flags may be the very thing that failed to parse.
type Identity struct{ Name, Team, Home string }

// IdentityOf returns the identity in args when they start a teammate
// (--agent-name and --team-name, or --agent-id name@team), with --home.
func IdentityOf(args []string) (Identity, bool) {
	var id Identity
	agentID := ""
	for i := 0; i < len(args); i++ {
		k, v, eq := strings.Cut(args[i], "=")
		if !eq && i+1 < len(args) {
			v = args[i+1]
		}
		var dst *string
		switch k {
		case "--agent-name":
			dst = &id.Name
		case "--team-name":
			dst = &id.Team
		case "--agent-id":
			dst = &agentID
		case "--home":
			dst = &id.Home
		default:
			continue
		}
		*dst = v
		if !eq {
			i++
		}
	}
	if n, t, err := team.ParseAgentID(agentID); err == nil {
		id.Name, id.Team = cmp.Or(id.Name, n), cmp.Or(id.Team, t)
	}
	return id, id.Name != "" && id.Team != ""
}

// StartFailed tells the lead, and the teammate's log, that a pane
// teammate could not start (bad flags, no model, an unreadable prompt):
// a message in the lead's inbox, so that the lead does not wait for a
// teammate that will never work. Both are best effort: the store may be
// the very thing that failed.
func StartFailed(a *cli.App, id Identity, cause error) {
	if a.HomeFlag == "" {
		a.HomeFlag = id.Home
	}
	text := fmt.Sprintf("Teammate %s could not start: %v", id.Name, cause)
	if home, err := a.Home(); err == nil {
		dir := filepath.Join(home, "logs", team.SanitizePath(id.Team))
		if os.MkdirAll(dir, 0o700) == nil {
			if f, err := os.OpenFile(filepath.Join(dir, team.SanitizePath(id.Name)+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600); err == nil {
				fmt.Fprintf(f, "%s %-10s %s\n", a.Now().Format("15:04:05.000"), id.Name, text)
				f.Close()
			}
		}
	}
	sess, err := a.Open()
	if err != nil {
		fmt.Fprintf(a.Stderr, "troupe: cannot tell the lead that %s could not start: %v\n", id.Name, err)
		return
	}
	defer sess.Release()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := sess.Mail.Send(ctx, id.Team, team.LeadName, mailbox.Message{From: id.Name, Text: text, Summary: "could not start"}); err != nil {
		fmt.Fprintf(a.Stderr, "troupe: cannot tell the lead that %s could not start: %v\n", id.Name, err)
	}
}
