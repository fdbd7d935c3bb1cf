package broker

import "context"

// Topology is what a run needs on a broker, under the run's unique name.
type Topology interface {
	// Setup creates it; setting up what exists with the same settings does nothing.
	Setup(ctx context.Context) error
	// Teardown deletes it with every message left in it; tearing down what is gone does
	// nothing, so that a run can always tear down at its end.
	Teardown(ctx context.Context) error
}

var (
	_ Topology = (*AMQPTopology)(nil)
	_ Topology = (*JetStreamTopology)(nil)
)
