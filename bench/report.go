package bench

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Machine describes where a report was measured.
type Machine struct {
	CPUs     int    `json:"cpus"`
	MemBytes int64  `json:"mem_bytes,omitempty"`
	Kernel   string `json:"kernel,omitempty"`
	OS       string `json:"os"`
	Arch     string `json:"arch"`
	Go       string `json:"go"`
	Node     string `json:"node,omitempty"`
	Date     string `json:"date"`
}

// Probe describes this machine, now.
func Probe(now time.Time) Machine {
	m := Machine{CPUs: runtime.NumCPU(), OS: runtime.GOOS, Arch: runtime.GOARCH, Go: runtime.Version(), Date: now.Format(time.RFC3339)}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				m.MemBytes = kb << 10
			}
		}
	}
	return m
}

// Report gathers the results of one troupe bench invocation.
type Report struct {
	Machine Machine `json:"machine"`
	// Store is what was measured: "file", or the NATS server's URL.
	Store    string          `json:"store,omitempty"`
	Writers  []WritersResult `json:"writers,omitempty"`
	Delivery *DeliveryResult `json:"delivery,omitempty"`
	Interop  []InteropResult `json:"interop,omitempty"`
	Race     []RaceResult    `json:"race,omitempty"`
	Drain    []DrainResult   `json:"drain,omitempty"`
	Team     []TeamResult    `json:"team,omitempty"`
	Skipped  []string        `json:"skipped,omitempty"`
}

// WriteMarkdown writes the report as markdown tables.
func (rep *Report) WriteMarkdown(w io.Writer) error {
	p := &printer{w: w}
	m := rep.Machine
	p.f("Machine: %d CPUs, %.1f GiB, %s/%s, kernel %s, %s", m.CPUs, float64(m.MemBytes)/(1<<30), m.OS, m.Arch, orDash(m.Kernel), m.Go)
	if m.Node != "" {
		p.f(", node %s", m.Node)
	}
	p.f(", %s\n", m.Date)
	if rep.Store != "" {
		p.f("Store: %s\n", rep.Store)
	}
	if len(rep.Writers) > 0 {
		p.f("\n### Writers into one inbox (B1-B3)\n\n")
		p.f("| W | msgs each | preload | rep | ok / attempted | failed | ok msg/s | send p50 ms | p99 ms | max ms | final KB | lost | dup | phantom | writers' CPU s |\n")
		p.f("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
		for _, r := range rep.Writers {
			p.f("| %d | %d | %d | %d | %d / %d | %s | %.1f | %.1f | %.1f | %.1f | %d | %d | %d | %s | %.1f |\n",
				r.Writers, r.Msgs, r.Preload, r.Rep, r.OK, r.Attempted, countsCell(r.Failed, r.Failures),
				r.OKPerS, r.Latency.P50, r.Latency.P99, r.Latency.Max, r.FinalBytes/1024,
				r.Verify.Lost, r.Verify.Duplicates, phantomCell(r.Verify, r.InvalidInbox), r.WriterCPUMS/1000)
		}
	}
	if d := rep.Delivery; d != nil {
		p.f("\n### Delivery latency, Watch + Read in its own process (B4)\n\n")
		p.f("Latency from the send's call to the watcher's Read that first showed the message, as the peer measures it; beside it, from the send's return (negative: seen before Send returned).\n\n")
		p.f("| messages | gaps ms | preload | p50 ms | p90 ms | p99 ms | max ms | min ms | from return p50 / p99 / max ms | missing | reads | kicks | read errors | reader CPU ms | send p50 / p99 ms |\n")
		p.f("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
		p.f("| %d (%d failed) | %.0f-%.0f | %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f / %.2f / %.2f | %d | %d | %d | %d | %.0f | %.1f / %.1f |\n",
			d.Sent, d.Failed, d.GapMinMS, d.GapMaxMS, d.Preload, d.Latency.P50, d.Latency.P90, d.Latency.P99, d.Latency.Max, d.Latency.Min,
			d.FromReturn.P50, d.FromReturn.P99, d.FromReturn.Max, d.Missing, d.Reads, d.Kicks, d.ReadErrors, d.ReaderCPUMS, d.SendLatency.P50, d.SendLatency.P99)
	}
	if len(rep.Interop) > 0 {
		p.f("\n### Mixed troupe + Node writers into one inbox (B8)\n\n")
		p.f("| peer mode | troupe × msgs | node × msgs | troupe ok | troupe msg/s | troupe p99 ms | node ok | node msg/s | node p99 ms | node failures | valid JSON | lost | dup | phantom | stored after error |\n")
		p.f("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
		for _, r := range rep.Interop {
			p.f("| %s | %d × %d | %d × %d | %d / %d | %.1f | %.1f | %d / %d | %.1f | %.1f | %s | %s | %d | %d | %d | %d |\n",
				r.Mode, r.Troupe, r.Msgs, r.Node, r.Msgs, r.TSide.OK, r.TSide.Attempted, r.TSide.OKPerS, r.TSide.Latency.P99,
				r.NSide.OK, r.NSide.Attempted, r.NSide.OKPerS, r.NSide.Latency.P99, countsCell(r.NSide.Failed, r.NSide.Failures),
				yesNo(r.InvalidInbox == ""), r.Verify.Lost, r.Verify.Duplicates, r.Verify.Phantoms, r.Verify.StoredAfterError)
		}
	}
	if len(rep.Race) > 0 {
		p.f("\n### Claim race on one task (B6)\n\n")
		p.f("| agents | rounds | violations | outcomes | claim p50 ms | p90 ms | p99 ms | max ms |\n")
		p.f("|---|---|---|---|---|---|---|---|\n")
		for _, r := range rep.Race {
			p.f("| %d | %d | %d | %s | %.1f | %.1f | %.1f | %.1f |\n", r.Agents, r.Rounds, r.Violations, mapCell(r.Outcomes),
				r.Latency.P50, r.Latency.P90, r.Latency.P99, r.Latency.Max)
		}
	}
	if len(rep.Drain) > 0 {
		p.f("\n### Drain independent tasks (B7)\n\n")
		p.f("Each task costs troupe two writes (a claim that sets the owner and in_progress together, then completed); the peer's replica makes three (claim, in_progress, completed), so its tasks/s is not for the same writes.\n\n")
		p.f("Claim latency is the whole Claim call (reading the list and every attempt); the winning write alone is what the peer's claim latency covers (one claimTask call that succeeded).\n\n")
		p.f("| agents | tasks | wall s | tasks/s | claims | double claims | completed | wasted | busy | errors | claim p50 ms | p99 ms | winning write p50 ms | p99 ms |\n")
		p.f("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
		for _, r := range rep.Drain {
			p.f("| %d | %d | %.2f | %.1f | %d | %d | %d | %d | %d | %s | %.1f | %.1f | %.1f | %.1f |\n", r.Agents, r.Tasks, r.WallS, r.TasksPerS,
				r.Claims, r.DoubleClaims, r.Completed, r.Wasted, r.Busy, mapCell(r.Errors), r.Latency.P50, r.Latency.P99, r.Write.P50, r.Write.P99)
		}
	}
	if len(rep.Team) > 0 {
		p.f("\n### A team of in-process teammates on several hosts\n\n")
		p.f("Delivery runs from a ping's Send call to the recipient teammate's model being asked with it, to a settled team (every teammate idle in the team file, after the drain); beside it, from the Send's return; then a second round to the team once it settled again (the again column); and, in the last column, for pings sent right after the drain, while the teammates that lost their last claims still linger and go idle together. Memory per idle teammate is a host's growth in resident memory over its spawn, per teammate; idle CPU is every host's over the idle window, which starts once every teammate is idle in the team file, in percent of one core.\n\n")
		p.f("| teammates | hosts | spawn all s | host RSS MB | KiB per idle teammate | idle CPU %% of a core | tasks (chains) | drain s | tasks/s | claims | double claims | completed | pings (missing) | delivery p50 / p99 ms | from return p50 / p99 ms | again p50 / p99 ms | settle s | right after the drain p50 / p99 ms |\n")
		p.f("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
		for _, r := range rep.Team {
			rss := make([]string, len(r.HostRSSMB))
			for i, v := range r.HostRSSMB {
				rss[i] = fmt.Sprintf("%.0f", v)
			}
			churn := "n/a (no drain)"
			if c := r.Churn; c != nil {
				churn = fmt.Sprintf("%.2f / %.2f (%d missing)", c.Delivery.P50, c.Delivery.P99, c.Missing)
			}
			delivery, fromReturn := fmt.Sprintf("%.2f / %.2f", r.Delivery.P50, r.Delivery.P99), fmt.Sprintf("%.2f / %.2f", r.FromReturn.P50, r.FromReturn.P99)
			again := "n/a"
			if a := r.Again; a != nil {
				again = fmt.Sprintf("%.2f / %.2f (%d missing)", a.Delivery.P50, a.Delivery.P99, a.Missing)
			}
			if r.Pings == 0 && r.Missing == 0 {
				delivery, fromReturn, again, churn = "n/a (no pings)", "n/a", "n/a", "n/a"
			}
			p.f("| %d | %d | %.2f | %s | %.0f | %.2f | %d (%d) | %.2f | %.1f | %d | %d | %d | %d (%d) | %s | %s | %s | %.1f | %s |\n",
				r.Teammates, r.Hosts, r.SpawnS, strings.Join(rss, ", "), r.IdleTeammateKB, r.IdleCPUPct, r.Tasks, r.Chain, r.DrainS, r.TasksPerS,
				r.Claims, r.DoubleClaims, r.Completed, r.Pings, r.Missing, delivery, fromReturn, again, r.SettleS, churn)
		}
	}
	for _, s := range rep.Skipped {
		p.f("\nSkipped: %s\n", s)
	}
	return p.err
}

type printer struct {
	w   io.Writer
	err error
}

func (p *printer) f(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "**no**"
}

// countsCell shows a total and its breakdown: "3 (ELOCKED 3)".
func countsCell(n int, by map[string]int) string {
	if n == 0 {
		return "0"
	}
	return fmt.Sprintf("%d (%s)", n, mapCell(by))
}

// mapCell renders counts as "a 1, b 2", sorted by key.
func mapCell(m map[string]int) string {
	if len(m) == 0 {
		return "-"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

func phantomCell(t Tally, invalid string) string {
	if invalid != "" {
		return fmt.Sprintf("%d (**invalid inbox**)", t.Phantoms)
	}
	return strconv.Itoa(t.Phantoms)
}

// Problems lists what the runs found wrong: lost, duplicated or invented
// messages, an invalid inbox, messages a watcher never saw, claim races
// without exactly one winner, tasks claimed twice or left unfinished.
// Failed sends are not problems: they were reported to their sender.
func (rep *Report) Problems() []string {
	var out []string
	tally := func(what string, t Tally, invalid string) {
		if invalid != "" {
			out = append(out, fmt.Sprintf("%s: %s", what, invalid))
		}
		if !t.Clean() {
			out = append(out, fmt.Sprintf("%s: %d lost, %d duplicates, %d phantoms, %d stored after an error (%s)",
				what, t.Lost, t.Duplicates, t.Phantoms, t.StoredAfterError, strings.Join(t.Examples, "; ")))
		}
	}
	for _, r := range rep.Writers {
		tally(fmt.Sprintf("writers W=%d M=%d preload=%d rep=%d", r.Writers, r.Msgs, r.Preload, r.Rep), r.Verify, r.InvalidInbox)
	}
	for _, r := range rep.Interop {
		tally(fmt.Sprintf("interop %s", r.Mode), r.Verify, r.InvalidInbox)
	}
	if d := rep.Delivery; d != nil && d.Missing > 0 {
		out = append(out, fmt.Sprintf("delivery: the watcher never saw %d of %d messages", d.Missing, d.Sent))
	}
	for _, r := range rep.Race {
		if r.Violations > 0 {
			out = append(out, fmt.Sprintf("claim race A=%d: %d rounds without exactly one winner (%s)", r.Agents, r.Violations, strings.Join(r.Examples, "; ")))
		}
	}
	for _, r := range rep.Drain {
		if r.DoubleClaims > 0 || r.Completed != r.Tasks {
			out = append(out, fmt.Sprintf("drain A=%d: %d double claims, %d of %d tasks completed (%s)", r.Agents, r.DoubleClaims, r.Completed, r.Tasks, strings.Join(r.Examples, "; ")))
		}
	}
	for _, r := range rep.Team {
		if r.DoubleClaims > 0 || r.Completed != r.Tasks || r.Missing > 0 {
			out = append(out, fmt.Sprintf("team N=%d hosts=%d: %d double claims, %d of %d tasks completed, %d of %d pings never woke their recipient (%s)",
				r.Teammates, r.Hosts, r.DoubleClaims, r.Completed, r.Tasks, r.Missing, r.Pings, strings.Join(append(r.Examples, r.Errors...), "; ")))
		}
	}
	return out
}
