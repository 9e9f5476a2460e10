//go:build !unix

package procgroup

import "os"

func running(pid int, _ uint64) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}

func killGroup(int, uint64) {}

func killProcess(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}

func startTime(int) uint64 { return 0 }
