//go:build !unix

package bash

import (
	"context"
	"time"

	"github.com/troupe-dev/troupe/tool"
)

// run refuses: process groups are a Unix facility.
func (t *Tool) run(context.Context, string, time.Duration) (tool.Result, error) {
	return tool.Errorf("Bash: not supported on this operating system"), nil
}
