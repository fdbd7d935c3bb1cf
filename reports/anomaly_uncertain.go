package reports

// The kinds of an uncertain outcome a client reported (issue 40, clients: property
// uncertain-stays-pending), kept in a block of their own. Both are unsafe: a caller told that an
// operation the API processed failed pays again, and one told that an operation nobody knows
// the fate of went through may never learn that it did not.
const (
	// KindUncertainReportedAsFailure: a client reported failed an operation none of whose
	// attempts was answered (the API processed the first): its caller starts it again.
	KindUncertainReportedAsFailure Kind = "uncertain-reported-as-failure"
	// KindUncertainReportedAsSuccess: a client reported done an operation none of whose attempts
	// was answered: it fabricated a success it could not know.
	KindUncertainReportedAsSuccess Kind = "uncertain-reported-as-success"
)
