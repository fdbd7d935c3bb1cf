package faults

import (
	"context"
	"time"
)

// BrokerCount counts the consumers a broker tells attached to the target's queues (the lowest
// over its queue consumers), for the readiness probe ready.broker_consumers. The harness, which
// knows the brokers, gives it to StartCluster.
type BrokerCount func(ctx context.Context) (int, error)

// brokerProbe is the readiness probe of a process with no HTTP port: ready once the broker
// counts each consumers for every running process (the one starting included).
type brokerProbe struct {
	c    *Cluster
	each int
}

func (b *brokerProbe) close() {}

func (b *brokerProbe) ready(ctx context.Context) bool {
	if b.c.count == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	n, err := b.c.count(ctx)
	return err == nil && n >= b.each*b.c.runningCount()
}

// runningCount is how many processes run (started and not killed).
func (c *Cluster) runningCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, p := range c.running {
		if p != nil {
			n++
		}
	}
	return n
}
