package suites

import (
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// DoVariant sends the operation with one field changed (a body leaf or a query parameter, from
// Operation.FieldVariants) to the given instance, and returns the attempt as recorded: Do for a
// variant, whose query Send cannot change.
func (o *Op) DoVariant(v targets.FieldVariant, instance int) history.Attempt {
	return o.sendVariant(v, instance)
}
