package main

import (
	"fmt"
	"runtime"

	"github.com/troupe-dev/troupe/cli"

	"github.com/spf13/cobra"
)

// versionInfo is what troupe version prints.
type versionInfo struct {
	Version string `json:"version"`
	Go      string `json:"go"`
	OS      string `json:"os"`
	Arch    string `json:"arch"`
}

func (a *app) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of troupe, of Go, and the platform",
		Args:  cli.Positional(),
		RunE: func(cmd *cobra.Command, args []string) error {
			v := versionInfo{Version: a.Version, Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
			if a.JSON {
				return a.PrintJSON(v)
			}
			_, err := fmt.Fprintf(a.Stdout, "troupe %s (%s %s/%s)\n", v.Version, v.Go, v.OS, v.Arch)
			return err
		},
	}
}
