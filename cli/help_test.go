package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestGroupHelp checks that the root's help lists its flags in the given
// sections and order, persistent flags included, the rest under "Other
// flags", hidden ones nowhere, and that subcommands keep cobra's layout.
func TestGroupHelp(t *testing.T) {
	root := &cobra.Command{Use: "x", Run: func(*cobra.Command, []string) {}}
	f := root.Flags()
	f.Bool("zeta", false, "z")
	f.Bool("alpha", false, "a")
	f.Bool("loose", false, "l")
	f.Bool("secret", false, "s")
	_ = f.MarkHidden("secret")
	root.PersistentFlags().String("home", "", "h")
	sub := &cobra.Command{Use: "sub", Run: func(*cobra.Command, []string) {}}
	root.AddCommand(sub)
	GroupHelp(root, []FlagGroup{{Title: "First", Flags: []string{"zeta", "alpha"}}, {Title: "Stores", Flags: []string{"home", "missing"}}})

	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs([]string{"--help"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	help := out.String()
	order := []string{"First:", "--zeta", "--alpha", "Stores:", "--home", "Other flags:", "--loose"}
	at := 0
	for _, w := range order {
		i := strings.Index(help[at:], w)
		if i < 0 {
			t.Fatalf("help lacks %q after position %d (want the order %q):\n%s", w, at, order, help)
		}
		at += i + len(w)
	}
	if strings.Contains(help, "--secret") {
		t.Errorf("help shows a hidden flag:\n%s", help)
	}

	out.Reset()
	root.SetArgs([]string{"sub", "--help"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.Contains(got, "Global Flags:") || strings.Contains(got, "First:") {
		t.Errorf("subcommand help is not cobra's layout:\n%s", got)
	}
}
