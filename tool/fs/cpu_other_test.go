//go:build !unix

package fs

import "time"

// processCPU is not measured here.
func processCPU() time.Duration { return 0 }
