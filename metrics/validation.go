package metrics

// Validation accuracy (metric-calculators, “Validation Accuracy Metric”): whether the validator's isValid
// verdict on the final attempt agrees with the item's expected should_pass
// flag, 1.0 or 0.0. ClassifyValidation also names the validation type and,
// for a rejection, the error category (syntax, schema, safety, execution),
// taken from the attempt's error class or, when that is empty, from the
// error message.

import (
	"context"
	"errors"
	"strings"

	"github.com/evalflow/evalflow/item"
)

// Validation types.
const (
	ValidationCorrectAcceptance = "correct acceptance"
	ValidationCorrectRejection  = "correct rejection"
	ValidationFalseRejection    = "false rejection"
	ValidationFalseAcceptance   = "false acceptance"
)

// Error categories of a rejected query.
const (
	CategorySyntax    = "syntax error"
	CategorySchema    = "schema violation"
	CategorySafety    = "safety violation"
	CategoryExecution = "execution error"
)

// ValidationVerdict is the classification of one validator decision.
type ValidationVerdict struct {
	Score    float64
	Type     string
	Category string // for a rejection; "" for an acceptance
}

// ErrorCategory maps an error class (item.Class*) or, when class is empty,
// an error message to one of the four categories.
func ErrorCategory(class, msg string) string {
	switch class {
	case item.ClassSyntax:
		return CategorySyntax
	case item.ClassSchema:
		return CategorySchema
	case item.ClassSafety:
		return CategorySafety
	case item.ClassExecution, item.ClassTimeout:
		return CategoryExecution
	}
	m := strings.ToLower(msg)
	has := func(ws ...string) bool {
		for _, w := range ws {
			if strings.Contains(m, w) {
				return true
			}
		}
		return false
	}
	switch {
	case has("syntax", "parse error", "unexpected token", "unterminated", "incomplete input"):
		return CategorySyntax
	case has("does not exist", "no such table", "no such column", "unknown table", "unknown column",
		"unknown label", "unknown property", "not found in schema", "ambiguous column"):
		return CategorySchema
	case has("unsafe", "not allowed", "read-only", "forbidden", "drop ", "delete ", "injection", "multiple statements"):
		return CategorySafety
	}
	return CategoryExecution
}

// ClassifyValidation classifies the validator's isValid flag against the
// expected shouldPass flag; class and msg describe the rejection.
func ClassifyValidation(isValid, shouldPass bool, class, msg string) ValidationVerdict {
	switch {
	case isValid && shouldPass:
		return ValidationVerdict{Score: 1, Type: ValidationCorrectAcceptance}
	case !isValid && !shouldPass:
		return ValidationVerdict{Score: 1, Type: ValidationCorrectRejection, Category: ErrorCategory(class, msg)}
	case !isValid && shouldPass:
		return ValidationVerdict{Type: ValidationFalseRejection, Category: ErrorCategory(class, msg)}
	default:
		return ValidationVerdict{Type: ValidationFalseAcceptance}
	}
}

type validationMetric struct{ field, which string }

func (validationMetric) Info() Info { return validationInfo }

func (m validationMetric) Score(_ context.Context, in Input) item.Score {
	const name = "validation_accuracy"
	rec := in.Record
	if rec == nil {
		return Failed(name, errors.New("no record"))
	}
	want, ok, err := expectedFlag(rec, m.field)
	if err != nil {
		return Failed(name, err)
	}
	a := pickAttempt(rec, m.which)
	if !ok || a == nil || !a.Validated {
		return item.Score{Name: name, Null: true}
	}
	v := ClassifyValidation(a.Valid, want, a.ErrorClass, a.ErrorMessage)
	return item.Score{Name: name, Value: v.Score}
}

var validationInfo = Info{
	Name:        "validation_accuracy",
	Description: "Whether the validator's verdict on the final attempt matches the expected should_pass flag.",
	Reference:   "*metric-calculators*, “Validation Accuracy Metric” requirement",
	Inputs:      "Record.Final() (Validated, Valid, ErrorClass, ErrorMessage); item field should_pass",
	Range:       "{0,1}; null when the attempt was not validated or the item has no flag",
}

func init() {
	Register(Def{
		Info:    validationInfo,
		Options: []string{"expected_field", "attempt"},
		NewItem: func(o Options) (ItemMetric, error) {
			f, err := o.String("expected_field", "should_pass")
			if err != nil {
				return nil, err
			}
			which, err := attemptOption(o, AttemptFinal)
			if err != nil {
				return nil, err
			}
			return validationMetric{field: f, which: which}, nil
		},
	})
}
