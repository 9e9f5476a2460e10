package cli

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// FlagGroup is one section of a command's help: a title and the flags
// listed under it, in order.
type FlagGroup struct {
	Title string
	Flags []string
}

// groupKey is the flag annotation that places a flag in a help section:
// the section's index and title, and the flag's place in it.
const groupKey = "troupe_help_group"

var addTemplateFunc sync.Once

// GroupHelp gives c's help its flags in sections, in the order of groups;
// a flag in none of them is listed under "Other flags". The sections are
// annotations on the flags themselves, so any number of command trees
// may use them at once. Subcommands keep cobra's layout.
func GroupHelp(c *cobra.Command, groups []FlagGroup) {
	for i, g := range groups {
		for j, name := range g.Flags {
			f := c.Flags().Lookup(name)
			if f == nil {
				f = c.PersistentFlags().Lookup(name) // merged into Flags when help runs
			}
			if f == nil {
				continue
			}
			if f.Annotations == nil {
				f.Annotations = map[string][]string{}
			}
			f.Annotations[groupKey] = []string{strconv.Itoa(i), g.Title, strconv.Itoa(j)}
		}
	}
	// cobra keeps template functions in a package variable: set it once,
	// before any command runs, as commands may run concurrently in tests.
	addTemplateFunc.Do(func() { cobra.AddTemplateFunc("groupedFlags", groupedFlags) })
	tmpl := c.UsageTemplate()
	const flags = `{{if .HasAvailableLocalFlags}}

Flags:
{{.LocalFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}{{if .HasAvailableInheritedFlags}}

Global Flags:
{{.InheritedFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}`
	if strings.Contains(tmpl, flags) {
		tmpl = strings.Replace(tmpl, flags, `{{if not .HasParent}}{{groupedFlags .}}{{else}}`+flags+`{{end}}`, 1)
		c.SetUsageTemplate(tmpl)
	}
}

// groupedFlags renders c's visible flags by section.
func groupedFlags(c *cobra.Command) string {
	type placed struct {
		section, place int
		title          string
		flag           *pflag.Flag
	}
	var all []placed
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		p := placed{section: 1 << 30, place: len(all), title: "Other flags", flag: f}
		if g := f.Annotations[groupKey]; len(g) == 3 {
			p.section, _ = strconv.Atoi(g[0])
			p.title = g[1]
			p.place, _ = strconv.Atoi(g[2])
		}
		all = append(all, p)
	})
	slices.SortStableFunc(all, func(a, b placed) int { return cmp.Or(a.section-b.section, a.place-b.place) })
	var b strings.Builder
	for i := 0; i < len(all); {
		fs := pflag.NewFlagSet(all[i].title, pflag.ContinueOnError)
		fs.SortFlags = false
		j := i
		for ; j < len(all) && all[j].section == all[i].section; j++ {
			fs.AddFlag(all[j].flag)
		}
		b.WriteString("\n\n" + all[i].title + ":\n" + strings.TrimRight(fs.FlagUsages(), " \n"))
		i = j
	}
	return b.String()
}
