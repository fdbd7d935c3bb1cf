package broker

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"regexp"
)

// DefaultNamePrefix starts every name UniqueName makes, so that a person listing a broker can
// tell a harness's leftovers from anything else.
const DefaultNamePrefix = "retrysafe"

// maxNameLen keeps names well within RabbitMQ's 255 bytes and JetStream's limits once the
// suffixes (".q", ".x", ".events", "-consumer") are added.
const maxNameLen = 200

// namePattern is what both brokers accept as a queue, exchange and stream name, and as a
// subject token: no dots, wildcards, spaces or path separators.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// UniqueName returns "retrysafe-<label>-<16 hex digits>", a name no other run uses. The label
// says what the run is (such as the property it checks); an empty label is left out.
func UniqueName(label string) string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	if label == "" {
		return DefaultNamePrefix + "-" + hex.EncodeToString(b[:])
	}
	return DefaultNamePrefix + "-" + label + "-" + hex.EncodeToString(b[:])
}

// checkName returns an error a person can act on when name cannot name a run's topology.
func checkName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("run name is empty")
	case len(name) > maxNameLen:
		return fmt.Errorf("run name %.20q... is %d bytes long (at most %d)", name, len(name), maxNameLen)
	case !namePattern.MatchString(name):
		return fmt.Errorf("run name %q: only letters, digits, '-' and '_' are allowed (JetStream forbids '.', '*', '>', spaces and slashes)", name)
	}
	return nil
}
