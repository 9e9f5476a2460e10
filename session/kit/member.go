package kit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/troupe-dev/troupe/mcp"
	"github.com/troupe-dev/troupe/team"
	"github.com/troupe-dev/troupe/tool"
	"github.com/troupe-dev/troupe/tool/inbox"
	"github.com/troupe-dev/troupe/tool/teamtool"
)

// MCPBackend is the backendType of a member attached over MCP (troupe
// mcp serve).
const MCPBackend = "mcp"

// memberInstructions tell the connecting agent how to be a teammate.
const memberInstructions = `You are %s, a member of the agent team %q run by troupe. Coordinate only through these tools:
ReadInbox reads messages from the lead and teammates; SendMessage answers them (to a name, or "*" for everyone);
TaskList, TaskGet, TaskCreate and TaskUpdate work on the shared task list (claim a task by setting its owner to %q and status in_progress, and mark it completed when done);
TeamMembers lists the team. When you have nothing to do, call WaitForWork: it tells the lead you are idle and returns the next message or claimable task.
When a shutdown_request arrives, answer it with SendMessage (message {"type":"shutdown_response","request_id":...,"approve":true}); approving ends your membership.`

// leaveTimeout bounds the roster updates made on the way out.
const leaveTimeout = 10 * time.Second

// MCPMember is a member of a team whose agent is any MCP client: it
// joins the roster with the MCPBackend, and its coordination tools are
// served over MCP. Its methods are safe for concurrent use.
type MCPMember struct {
	st     Stores
	team   string
	member team.Member
	now    func() time.Time

	left sync.Once
}

// MCPMemberConfig says who joins which team.
type MCPMemberConfig struct {
	Stores Stores
	Team   string
	Name   string
	Color  string // empty: the next of the palette
	Cwd    string
	// Now stamps the roster and messages; nil means time.Now.
	Now func() time.Time
}

// JoinMCP adds the member to the team, active. A member of that name
// already on the roster with another backend is an error, since its
// agent runs elsewhere; one of the MCP backend (a client that left
// without approving a shutdown) is taken over.
func JoinMCP(ctx context.Context, c MCPMemberConfig) (*MCPMember, error) {
	if c.Now == nil {
		c.Now = time.Now
	}
	m, err := team.AddMember(ctx, c.Stores.Teams, c.Team, team.Member{Name: c.Name, Color: c.Color, Cwd: c.Cwd, BackendType: MCPBackend, AgentType: "mcp"}, c.Now())
	if err != nil {
		return nil, fmt.Errorf("join team %s: %w", c.Team, err)
	}
	if m.BackendType != MCPBackend {
		return nil, fmt.Errorf("join team %s: %s is already a member with backend %q; pick another --agent", c.Team, c.Name, m.BackendType)
	}
	_ = team.SetActive(ctx, c.Stores.Teams, c.Team, m.Name, true)
	return &MCPMember{st: c.Stores, team: c.Team, member: m, now: c.Now}, nil
}

// Member returns the member as the roster holds it.
func (m *MCPMember) Member() team.Member { return m.member }

// Tools are the member's tools: the team tools (SendMessage, TaskCreate,
// TaskGet, TaskList, TaskUpdate) and the inbox tools (ReadInbox,
// WaitForWork, TeamMembers). shutdown runs once the member approved a
// shutdown request.
func (m *MCPMember) Tools(shutdown func(requestID string)) []tool.Tool {
	self := teamtool.Self{Team: m.team, Name: m.member.Name, Color: m.member.Color, PaneID: MCPBackend, Backend: MCPBackend}
	var out []tool.Tool
	for _, t := range teamtool.Tools(teamtool.Config{Teams: m.st.Teams, Mail: m.st.Mail, Tasks: m.st.Tasks, Now: m.now,
		Self: func() teamtool.Self { return self }, Hooks: teamtool.Hooks{ShutdownApproved: shutdown}}) {
		if t.Spec().Name != "ExitPlanMode" {
			out = append(out, t)
		}
	}
	return append(out, inbox.Tools(inbox.Config{Teams: m.st.Teams, Mail: m.st.Mail, Tasks: m.st.Tasks, Team: m.team, Name: m.member.Name, Color: m.member.Color, Now: m.now})...)
}

// Server returns the MCP server of the member's Tools, whose
// instructions tell the client how to be a teammate.
func (m *MCPMember) Server(version string, shutdown func(requestID string)) *mcp.Exposed {
	return mcp.Expose("troupe-teammate", version, fmt.Sprintf(memberInstructions, m.member.Name, m.team, m.member.Name), m.Tools(shutdown))
}

// Leave removes the member from the roster, once; later calls do
// nothing. It works on after ctx ends, bounded by its own timeout, since
// it runs on the way out.
func (m *MCPMember) Leave(ctx context.Context) error {
	var err error
	m.left.Do(func() {
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), leaveTimeout)
		defer cancel()
		if err = team.RemoveMember(lctx, m.st.Teams, m.team, m.member.Name); errors.Is(err, team.ErrNotFound) {
			err = nil
		}
	})
	return err
}

// Disconnect marks the member inactive: a client that disconnects
// without approving a shutdown stays on the roster, so the lead sees it
// went. Like Leave, it works on after ctx ends.
func (m *MCPMember) Disconnect(ctx context.Context) {
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), leaveTimeout)
	defer cancel()
	_ = team.SetActive(lctx, m.st.Teams, m.team, m.member.Name, false)
}
