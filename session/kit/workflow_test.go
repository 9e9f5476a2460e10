package kit

import (
	"testing"

	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/approve"
)

func TestAskingAs(t *testing.T) {
	base := &approve.Approver{Agent: "lead"}
	got := askingAs(base, "workflow review: verify a.go").(*approve.Approver)
	if got.Agent != "workflow review: verify a.go" || base.Agent != "lead" {
		t.Errorf("askingAs = %q (base now %q); want the new name on a copy", got.Agent, base.Agent)
	}
	c := underParent(base, func() permission.Mode { return permission.ModeDefault }).(ceiled)
	gc := askingAs(c, "workflow w: x").(ceiled)
	if gc.Agent != "workflow w: x" || c.Agent != "lead" || gc.parent == nil {
		t.Errorf("askingAs(ceiled) = %q (base %q)", gc.Agent, c.Agent)
	}
	if within, err := within("/p", "sub/dir"); err != nil || within != "/p/sub/dir" {
		t.Errorf("within = %q, %v", within, err)
	}
	if _, err := within("/p", "../etc"); err == nil {
		t.Error("within(/p, ../etc) succeeded; want a refusal")
	}
}
