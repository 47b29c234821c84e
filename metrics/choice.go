package metrics

import (
	"fmt"
	"strings"
)

// ChoiceError reports a metric option whose value is not one of a fixed
// set. The score stage turns it into a diagnostic at the option's value,
// with "did you mean" and every valid value; Valid comes from the same
// table the lookup uses (ProfileNames for compare), so a new value is
// listed and suggested without another edit.
type ChoiceError struct {
	Option string   // the option's name, e.g. "compare"
	Value  string   // what was given
	What   string   // what a valid value is, e.g. "a compare profile"
	Valid  []string // every valid value
}

func (e *ChoiceError) Error() string {
	return fmt.Sprintf("option %q: %q is not %s; valid values: %s", e.Option, e.Value, e.What, strings.Join(e.Valid, ", "))
}
