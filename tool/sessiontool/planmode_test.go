package sessiontool_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/approve"
	"github.com/troupe-dev/troupe/swarm"
	"github.com/troupe-dev/troupe/tool"
	"github.com/troupe-dev/troupe/tool/sessiontool"
)

func TestEnterPlanMode(t *testing.T) {
	modes := swarm.NewApprover(&approve.Approver{Mode: permission.ModeAcceptEdits, Cwd: t.TempDir()})
	pm := sessiontool.NewPlanMode(modes)
	if pm.ReadOnly(nil) {
		t.Error("EnterPlanMode is read-only: it would switch without asking")
	}
	run := func(in string) tool.Result {
		res, err := pm.Run(t.Context(), tool.Call{Input: json.RawMessage(in)})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := run(`{"why":"x"}`); !res.IsError || modes.Mode() != permission.ModeAcceptEdits {
		t.Errorf("unknown field = %+v, mode %s", res, modes.Mode())
	}
	if res := run(`{}`); res.IsError || !strings.Contains(res.Content, "Entered plan mode (from acceptEdits)") || modes.Mode() != permission.ModePlan {
		t.Errorf("enter = %+v, mode %s", res, modes.Mode())
	}
	if res := run(``); res.IsError || !strings.Contains(res.Content, "already in plan mode") {
		t.Errorf("again = %+v", res)
	}
}
