package framework

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/onsi/ginkgo/v2/types"
	"github.com/retrysafe/retrysafe/reports"
)

// Selection picks the specs of a run.
type Selection struct {
	// LabelFilter is a label filter in Ginkgo's syntax, e.g. "property:race || property:replay"
	// or "!fault:process" ("" = every spec).
	LabelFilter string
	// Focus is a regular expression over the specs' full texts ("" = every spec).
	Focus string
}

// ErrBadOptions marks options that keep a run from starting (e.g. a malformed label filter).
var ErrBadOptions = errors.New("bad run options")

// ansi matches terminal colour codes in Ginkgo's messages.
var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

// CheckLabelFilter reports a malformed label filter as ErrBadOptions.
func CheckLabelFilter(expr string) error {
	_, err := compileLabels(expr)
	return err
}

// compileLabels parses a label filter ("" matches every spec).
func compileLabels(expr string) (func([]string) bool, error) {
	if expr == "" {
		return func([]string) bool { return true }, nil
	}
	f, err := types.ParseLabelFilter(expr)
	if err != nil {
		msg := strings.Join(strings.Fields(ansi.ReplaceAllString(err.Error(), "")), " ")
		return nil, fmt.Errorf("%w: --label-filter %q: %s", ErrBadOptions, expr, msg)
	}
	return f, nil
}

// Selects returns the label sets of p's specs (Property.LabelSets) that the selection's label
// filter selects: none when a run with it would run no spec of p, whatever the target.
func (sel Selection) Selects(p *Property) ([][]string, error) {
	labels, err := compileLabels(sel.LabelFilter)
	if err != nil {
		return nil, err
	}
	var out [][]string
	for _, set := range p.LabelSets() {
		if labels(set) {
			out = append(out, set)
		}
	}
	return out, nil
}

// Matches returns the selected specs among specs, in order.
func (sel Selection) Matches(specs []*Spec) ([]*Spec, error) {
	labels, err := compileLabels(sel.LabelFilter)
	if err != nil {
		return nil, err
	}
	var focus *regexp.Regexp
	if sel.Focus != "" {
		if focus, err = regexp.Compile(sel.Focus); err != nil {
			return nil, fmt.Errorf("%w: --focus %q: %v", ErrBadOptions, sel.Focus, err)
		}
	}
	var out []*Spec
	for _, sp := range specs {
		if labels(sp.Labels()) && (focus == nil || focus.MatchString(sp.FullText())) {
			out = append(out, sp)
		}
	}
	return out, nil
}

// Specs returns the selected specs of the target, in run order.
func (h *Harness) Specs(sel Selection) ([]*Spec, error) { return sel.Matches(h.env.Specs()) }

// Run runs the selected specs one after another and returns the run's result. It stops at
// the first spec after ctx ended (an interrupt, a deadline): the report then says the run is
// incomplete, and why.
func (h *Harness) Run(ctx context.Context, sel Selection) (*Result, error) {
	specs, err := h.Specs(sel)
	if err != nil {
		return nil, err
	}
	var outcomes []*Outcome
	incomplete := ""
	for _, sp := range specs {
		if ctx.Err() != nil {
			incomplete = stopReason(ctx)
			break
		}
		o := h.env.RunSpec(ctx, sp)
		outcomes = append(outcomes, o)
		WriteProgress(h.o.progress, o)
		if o.Interrupted {
			incomplete = stopReason(ctx)
			break
		}
	}
	return h.Result(outcomes, incomplete), nil
}

// stopReason says why a run stopped early: "deadline: ..." or "interrupted: ...".
func stopReason(ctx context.Context) string {
	cause := context.Cause(ctx)
	if errors.Is(cause, context.DeadlineExceeded) {
		return "deadline: " + cause.Error()
	}
	return fmt.Sprintf("interrupted: %v", cause)
}

// WriteProgress prints one line for a finished spec (w nil: nothing).
func WriteProgress(w io.Writer, o *Outcome) {
	if w == nil {
		return
	}
	v := o.Verdict()
	line := fmt.Sprintf("  %-7s %s (%.1fs)", v, o.Spec.FullText(), o.Duration.Seconds())
	if v != reports.Pass {
		line += ": " + firstLine(o.Message())
	}
	if len(o.Result.Observed) > 0 {
		line += " [" + strings.Join(o.Result.Observed, "; ") + "]"
	}
	fmt.Fprintln(w, line)
}
