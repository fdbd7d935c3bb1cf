package reports

import "time"

// FaultEvent is one action of the run's nemesis: a fault injected or healed.
type FaultEvent struct {
	// At is when the action took effect.
	At time.Time `json:"at"`
	// Action is "inject" or "heal".
	Action string `json:"action"`
	// Kind is what the fault is (documented in docs/report-schema.md): kill, pause,
	// hold-downstream, fail-downstream, delay-downstream, storage-latency, storage-reset,
	// cut-response, latency, reset-peer, timeout, partition, cut-broker-link.
	Kind string `json:"kind"`
	// Target is the instance or link the fault acts on, e.g. "instance 0" or "storage".
	Target string `json:"target"`
	// Fault is the fault's full name, e.g. "instance-0: cut response after 0 bytes".
	Fault string `json:"fault,omitempty"`
	// Error is the error of a failed action; "" = it succeeded.
	Error string `json:"error,omitempty"`
}
