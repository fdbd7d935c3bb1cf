package framework

import (
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// DoVariant sends the operation with one field changed (a body leaf or a query parameter, from
// Operation.FieldVariants) to the given instance, and returns the attempt as recorded: Do for a
// variant, whose query Send cannot change.
func (o *Op) DoVariant(v targets.FieldVariant, instance int) history.Attempt {
	return o.SendVariant(v, instance)
}

// SendVariant sends the operation with one field changed.
func (o *Op) SendVariant(v targets.FieldVariant, instance int) history.Attempt {
	ctx, cancel := o.s.AttemptCtx(1)
	defer cancel()
	req, meta, err := o.Build(ctx, Send{Instance: instance, Body: v.Body})
	if err != nil {
		return o.s.History.Add(history.Attempt{Op: o.Def.Name, Key: o.Key, Outcome: history.Failed, Err: "build request: " + err.Error()})
	}
	if v.RawQuery != "" {
		req.URL.RawQuery = v.RawQuery
	}
	meta.Note = "field " + v.Field + " changed"
	return o.s.Client.Do(ctx, req, meta)
}
