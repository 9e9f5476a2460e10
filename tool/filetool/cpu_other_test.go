//go:build !unix

package filetool

import "time"

// processCPU is not measured here.
func processCPU() time.Duration { return 0 }
