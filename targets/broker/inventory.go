package broker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Inventory is the names of what exists on the brokers at one moment: RabbitMQ's queues and
// exchanges on one virtual host (the nameless default exchange left out) and JetStream's
// streams. Take one before a run and one after: After.Since(Before) is what the run left
// behind. Each list is sorted.
type Inventory struct {
	// Queues are RabbitMQ's queue names.
	Queues []string `json:"queues"`
	// Exchanges are RabbitMQ's exchange names.
	Exchanges []string `json:"exchanges"`
	// Streams are JetStream's stream names.
	Streams []string `json:"streams"`
}

// TakeInventory lists the brokers. RabbitMQ's lists come from rabbitmqctl, as the management
// HTTP API may be off (it must run where rabbitmqctl may reach the node, such as root on the
// broker's machine); JetStream's from its API. It takes WithKinds, WithRabbitmqctl,
// WithNATSURL and WithDialTimeout.
func TakeInventory(ctx context.Context, opts ...Option) (Inventory, error) {
	c := newConfig(opts)
	var inv Inventory
	var err error
	if slices.Contains(c.kinds, AMQP) {
		if inv.Queues, inv.Exchanges, err = rabbitInventory(ctx, c); err != nil {
			return Inventory{}, err
		}
	}
	if slices.Contains(c.kinds, NATS) {
		if inv.Streams, err = streamNames(ctx, c); err != nil {
			return Inventory{}, err
		}
	}
	return inv, nil
}

// Since returns what inv has that before had not.
func (inv Inventory) Since(before Inventory) Inventory {
	return Inventory{
		Queues:    missingFrom(inv.Queues, before.Queues),
		Exchanges: missingFrom(inv.Exchanges, before.Exchanges),
		Streams:   missingFrom(inv.Streams, before.Streams),
	}
}

// WithPrefix returns the names of inv that start with prefix, such as one run's name.
func (inv Inventory) WithPrefix(prefix string) Inventory {
	keep := func(names []string) []string {
		var out []string
		for _, n := range names {
			if strings.HasPrefix(n, prefix) {
				out = append(out, n)
			}
		}
		return out
	}
	return Inventory{Queues: keep(inv.Queues), Exchanges: keep(inv.Exchanges), Streams: keep(inv.Streams)}
}

// Empty reports whether inv names nothing.
func (inv Inventory) Empty() bool {
	return len(inv.Queues) == 0 && len(inv.Exchanges) == 0 && len(inv.Streams) == 0
}

// String lists inv's names by kind, such as "queues [a.q] exchanges [a.x] streams []".
func (inv Inventory) String() string {
	return fmt.Sprintf("queues %v exchanges %v streams %v", inv.Queues, inv.Exchanges, inv.Streams)
}

func missingFrom(names, before []string) []string {
	var out []string
	for _, n := range names {
		if !slices.Contains(before, n) {
			out = append(out, n)
		}
	}
	return out
}

// rabbitInventory lists the queues and the exchanges (two rabbitmqctl runs, side by side).
// Every virtual host has an amq.direct exchange: a list without it means the vhost does not
// exist, which rabbitmqctl does not report.
func rabbitInventory(ctx context.Context, c config) (queues, exchanges []string, err error) {
	var qErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		queues, qErr = rabbitmqctlNames(ctx, c, "list_queues")
	}()
	exchanges, err = rabbitmqctlNames(ctx, c, "list_exchanges")
	<-done
	if err = errors.Join(err, qErr); err != nil {
		return nil, nil, err
	}
	if !slices.Contains(exchanges, "amq.direct") {
		return nil, nil, fmt.Errorf("RabbitMQ vhost %q has no amq.direct exchange: no such vhost? (rabbitmqctl list_vhosts)", c.vhost)
	}
	return queues, exchanges, nil
}

// rabbitmqctlNames runs "rabbitmqctl <list> -p VHOST -q --formatter json name".
func rabbitmqctlNames(ctx context.Context, c config, list string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, rabbitmqctlTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.rabbitmqctl, list, "-p", c.vhost, "-q", "--formatter", "json", "name")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s %s on vhost %q: %w: %s", c.rabbitmqctl, list, c.vhost, err, strings.TrimSpace(stderr.String()))
	}
	names, err := parseRabbitmqctlNames(out)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", c.rabbitmqctl, list, err)
	}
	return names, nil
}

// rabbitmqctlTimeout bounds one rabbitmqctl run (it starts an Erlang VM: about half a second).
const rabbitmqctlTimeout = 30 * time.Second

// parseRabbitmqctlNames reads rabbitmqctl's JSON formatter output, [{"name":"..."}, ...], into
// sorted names without the empty one.
func parseRabbitmqctlNames(out []byte) ([]string, error) {
	var rows []struct {
		Name *string `json:"name"`
	}
	if err := json.Unmarshal(out, &rows); err != nil {
		return nil, fmt.Errorf("unexpected output %.200q: %w", out, err)
	}
	names := make([]string, 0, len(rows))
	for i, r := range rows {
		if r.Name == nil {
			return nil, fmt.Errorf("row %d has no name: %.200q", i, out)
		}
		if *r.Name != "" {
			names = append(names, *r.Name)
		}
	}
	slices.Sort(names)
	return names, nil
}

// streamNames lists JetStream's stream names.
func streamNames(ctx context.Context, c config) ([]string, error) {
	names := []string{}
	err := withJetStream(ctx, c.natsURL, c.dialTimeout, func(ctx context.Context, js jetstream.JetStream) error {
		l := js.StreamNames(ctx)
		for n := range l.Name() {
			names = append(names, n)
		}
		if err := l.Err(); err != nil {
			return fmt.Errorf("list JetStream streams on %s: %w", redactURL(c.natsURL), err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	return names, nil
}
