package agentflags

import (
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/troupe-dev/troupe/budget"
	"github.com/troupe-dev/troupe/cli"
	"github.com/troupe-dev/troupe/internal/termtext"
	"github.com/troupe-dev/troupe/permission/settings"
)

// ExitBudget is the exit status of a run that a budget limit stopped
// (--max-budget-usd, --max-tokens).
const ExitBudget = 6

// Budget is a session's spending limits.
type Budget struct {
	USD    float64
	Tokens int64
}

// Add defines --max-budget-usd and --max-tokens on f; a value that is not
// an amount or a count is refused when the flags are parsed.
func (b *Budget) Add(f *pflag.FlagSet) {
	f.Var((*usdValue)(&b.USD), "max-budget-usd", "stop the session once its agents (the lead, its teammates, their sub-agents) have spent `USD` at list prices: no new model call starts, and the run exits with status 6")
	f.Var((*tokensValue)(&b.Tokens), "max-tokens", "stop the session once its agents have used `N` tokens (input, cached input and output), as --max-budget-usd does")
}

// Limits returns the limits the flags set (zero: none).
func (b Budget) Limits() budget.Limits { return budget.Limits{USD: b.USD, Tokens: b.Tokens} }

// usdValue is a flag holding an amount in US dollars.
type usdValue float64

func (v *usdValue) String() string { return strconv.FormatFloat(float64(*v), 'f', -1, 64) }
func (v *usdValue) Type() string   { return "USD" }
func (v *usdValue) Set(s string) error {
	f, err := strconv.ParseFloat(s, 64)
	if err == nil {
		err = budget.Limits{USD: f}.Check("")
	}
	if err != nil {
		return fmt.Errorf("%q is not an amount in US dollars (want a positive number such as 2.50, or 0 for no limit)", s)
	}
	*v = usdValue(f)
	return nil
}

// tokensValue is a flag holding a number of tokens.
type tokensValue int64

func (v *tokensValue) String() string { return strconv.FormatInt(int64(*v), 10) }
func (v *tokensValue) Type() string   { return "N" }
func (v *tokensValue) Set(s string) error {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return fmt.Errorf("%q is not a number of tokens (want a positive whole number, or 0 for no limit)", s)
	}
	*v = tokensValue(n)
	return nil
}

// Prices returns the built-in price table with the modelPrices of the
// settings files under home for cwd over it ({"model-id": {"input": 3,
// "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}}, US dollars per
// million tokens).
func Prices(home, cwd string) (budget.Table, error) {
	over, file, err := settings.Key[budget.Table](settings.Files(home, cwd), "modelPrices")
	if err != nil {
		return nil, err
	}
	if err := over.Check(); err != nil {
		return nil, fmt.Errorf("%s: modelPrices: %w", file, err)
	}
	return budget.DefaultPrices().Merge(over), nil
}

// CheckPriced refuses a USD limit on a model without a price in prices
// (its calls would count as free, and the limit would never stop the
// run), naming the model and the modelPrices setting that prices it.
func CheckPriced(prices budget.Table, limits budget.Limits, model string) error {
	if limits.USD <= 0 {
		return nil
	}
	if _, ok := prices.Lookup(model); ok {
		return nil
	}
	return cli.Usagef("--max-budget-usd: model %q has no price, so what it spends cannot be counted; give its price (US dollars per million tokens) in the modelPrices setting, e.g. in .troupe/settings.json: {\"modelPrices\": {%q: {\"input\": 3, \"output\": 15}}}", model, model)
}

// Exit turns a run that a limit stopped into exit status ExitBudget,
// after saying why on stderr; other errors pass through.
func Exit(stderr io.Writer, err error) error {
	if !errors.Is(err, budget.ErrExceeded) {
		return err
	}
	fmt.Fprintf(stderr, "troupe: %s\n", termtext.Clean(err.Error()))
	return &cli.ExitError{Code: ExitBudget, Msg: err.Error()}
}
