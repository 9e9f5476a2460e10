package schedule

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// parser reads exactly the five standard fields (minute, hour, day of
// month, month, day of week), no seconds and no descriptors such as
// @every: what CronCreate documents to the model.
var parser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)

// Parse checks a 5-field cron expression ("*/10 * * * *", "0 9 * * 1-5")
// and returns its schedule; the error names the expression and the field
// at fault.
func Parse(expr string) (cron.Schedule, error) {
	expr = strings.TrimSpace(expr)
	if n := len(strings.Fields(expr)); n != 5 {
		return nil, fmt.Errorf("cron expression %q: want 5 fields (minute hour day-of-month month day-of-week), got %d", expr, n)
	}
	if strings.HasPrefix(expr, "@") {
		return nil, fmt.Errorf("cron expression %q: descriptors are not supported, want 5 fields", expr)
	}
	s, err := parser.Parse(expr)
	if err != nil {
		return nil, fmt.Errorf("cron expression %q: %v", expr, err)
	}
	return s, nil
}

// next returns the first time after t that expr matches; the zero time
// when expr does not parse or never matches (robfig/cron gives up after
// five years).
func next(expr string, t time.Time) time.Time {
	s, err := Parse(expr)
	if err != nil {
		return time.Time{}
	}
	return s.Next(t)
}

// Interval turns a /loop interval ("30s", "5m", "2h", "1d") into a cron
// expression, as Claude Code's /loop does: seconds round up to a whole
// minute; minutes up to 59 are "*/N * * * *"; hours (or minutes that are
// whole hours) up to 23 are "0 */H * * *"; days are "0 0 */N * *".
// An interval cron cannot keep exactly (7m leaves a short gap at the top
// of the hour, 90m is no whole hour) is refused with the nearest ones.
func Interval(s string) (string, error) {
	s = strings.TrimSpace(s)
	if len(s) < 2 {
		return "", fmt.Errorf("interval %q: want a number and a unit: s, m, h or d (5m, 2h)", s)
	}
	var n int
	if _, err := fmt.Sscanf(s[:len(s)-1], "%d", &n); err != nil || n <= 0 || fmt.Sprint(n) != s[:len(s)-1] {
		return "", fmt.Errorf("interval %q: want a positive whole number and a unit: s, m, h or d (5m, 2h)", s)
	}
	unit := s[len(s)-1]
	switch unit {
	case 's':
		n, unit = (n+59)/60, 'm'
	case 'm', 'h', 'd':
	default:
		return "", fmt.Errorf("interval %q: unit %q: want s, m, h or d", s, unit)
	}
	if unit == 'm' && n >= 60 {
		if n%60 != 0 {
			return "", fmt.Errorf("interval %q: cron cannot repeat every %d minutes; use %dh or %dh", s, n, n/60, n/60+1)
		}
		n, unit = n/60, 'h'
	}
	if unit == 'h' && n >= 24 {
		if n%24 != 0 {
			return "", fmt.Errorf("interval %q: cron cannot repeat every %d hours; use %dd or %dd", s, n, n/24, n/24+1)
		}
		n, unit = n/24, 'd'
	}
	switch unit {
	case 'm':
		if 60%n != 0 {
			return "", fmt.Errorf("interval %q: every %d minutes does not divide an hour evenly; use %s", s, n, near(n, 60, "m"))
		}
		if n == 1 {
			return "* * * * *", nil
		}
		return fmt.Sprintf("*/%d * * * *", n), nil
	case 'h':
		if 24%n != 0 {
			return "", fmt.Errorf("interval %q: every %d hours does not divide a day evenly; use %s", s, n, near(n, 24, "h"))
		}
		if n == 1 {
			return "0 * * * *", nil
		}
		return fmt.Sprintf("0 */%d * * *", n), nil
	}
	if n == 1 {
		return "0 0 * * *", nil
	}
	return fmt.Sprintf("0 0 */%d * *", n), nil
}

// near names the divisors of whole closest to n below and above it.
func near(n, whole int, unit string) string {
	lo, hi := n, n
	for whole%lo != 0 {
		lo--
	}
	for hi < whole && whole%hi != 0 {
		hi++
	}
	return fmt.Sprintf("%d%s or %d%s", lo, unit, hi, unit)
}
