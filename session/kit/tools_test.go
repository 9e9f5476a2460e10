package kit

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/approve"
	"github.com/troupe-dev/troupe/permission/shell"
)

// A sub-agent started under a bypassPermissions lead runs no wider than
// the lead once the lead is switched to default: its calls are judged in
// the lead's mode of the moment, not the one it started under.
func TestSubAgentFollowsItsParentsModeDown(t *testing.T) {
	var lead atomic.Value
	lead.Store(permission.ModeBypass)
	base := &approve.Approver{Policy: permission.Policy{Shell: shell.Parse}, Cwd: t.TempDir(), Mode: permission.ModeBypass}
	ap := underParent(base, func() permission.Mode { return lead.Load().(permission.Mode) })
	call := agent.Request{Tool: "Bash", Input: json.RawMessage(`{"command":"touch /tmp/owned-by-the-sub-agent"}`)}

	v, err := ap.Approve(context.Background(), call)
	if err != nil || !v.Allow {
		t.Fatalf("under a bypassPermissions lead: %+v, %v; want allowed", v, err)
	}
	lead.Store(permission.ModeDefault)
	v, err = ap.Approve(context.Background(), call)
	if err != nil || v.Allow {
		t.Fatalf("after the lead went to default: %+v, %v; want refused (no one to ask)", v, err)
	}
	if base.Mode != permission.ModeBypass {
		t.Errorf("the sub-agent's own approver changed: mode %s", base.Mode)
	}
	// No ceiling yet (the lead's approver not handed over): its own mode.
	lead.Store(permission.Mode(""))
	if v, _ := ap.Approve(context.Background(), call); !v.Allow {
		t.Errorf("with no parent mode yet: %+v; want its own bypassPermissions", v)
	}
	// A narrower child stays narrower under a wider parent.
	plan := underParent(&approve.Approver{Policy: permission.Policy{Shell: shell.Parse}, Cwd: t.TempDir(), Mode: permission.ModePlan},
		func() permission.Mode { return permission.ModeBypass })
	if v, _ := plan.Approve(context.Background(), call); v.Allow {
		t.Errorf("a plan-mode sub-agent under a bypassPermissions lead ran a write: %+v", v)
	}
}
