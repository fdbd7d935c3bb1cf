package targets

import (
	"errors"
	"strconv"
	"testing"
	"time"
)

// outage defaults to within and grace to DefaultGrace; both decode as declared, independent of
// each other; a bad one is located.
func TestPublishesOutageAndGrace(t *testing.T) {
	tests := []struct {
		name           string
		fields         []string
		outage, grace  time.Duration
		within         time.Duration
		wantedProblems []string
	}{
		{name: "defaults", fields: nil, within: DefaultWithin, outage: DefaultWithin, grace: DefaultGrace},
		{name: "outage follows within", fields: []string{"within: 30s"}, within: 30 * time.Second, outage: 30 * time.Second, grace: DefaultGrace},
		{name: "declared", fields: []string{"within: 30s", "outage: 2m", "grace: 500ms"}, within: 30 * time.Second, outage: 2 * time.Minute,
			grace: 500 * time.Millisecond},
		{name: "shorter than within", fields: []string{"within: 30s", "outage: 5s"}, within: 30 * time.Second, outage: 5 * time.Second, grace: DefaultGrace},
		{name: "a bad outage", fields: []string{"outage: soon"},
			wantedProblems: []string{`t.yaml:11: operations[0].publishes[0].outage: bad duration "soon"`}},
		{name: "a zero grace", fields: []string{"grace: 0s"},
			wantedProblems: []string{`t.yaml:11: operations[0].publishes[0].grace: bad duration "0s": must be greater than zero`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tg, probs := parseString(publishFile("", append([]string{natsOrders, idBody, refData}, tt.fields...)...), nil)
			if tt.wantedProblems != nil {
				wantProblems(t, probs, tt.wantedProblems)
				return
			}
			if probs != nil {
				t.Fatalf("problems: %v", probs)
			}
			p := tg.Operations[0].Publishes[0]
			if p.Within != tt.within || p.Outage != tt.outage || p.Grace != tt.grace {
				t.Errorf("within %v, outage %v, grace %v; want %v, %v, %v", p.Within, p.Outage, p.Grace, tt.within, tt.outage, tt.grace)
			}
		})
	}
}

// exchange_durable and exchange_auto_delete say how the harness declares the exchange it
// creates, in the amqp blocks of publishes and consumers; without create: true, or on the
// default exchange, they are located mistakes; an error of the declaration is located at them.
func TestAMQPExchangeSettings(t *testing.T) {
	amqp := func(extra string) string {
		return `amqp: {url: "amqp://127.0.0.1:5672/", exchange: orders, routing_key: k` + extra + `}`
	}
	tg, probs := parseString(publishFile("", amqp(", create: true, exchange_durable: false, exchange_auto_delete: true"), idBody, refData), nil)
	if probs != nil {
		t.Fatalf("problems: %v", probs)
	}
	b := tg.Operations[0].Publishes[0].AMQP
	if b.ExchangeDurable || !b.ExchangeAutoDelete {
		t.Errorf("durable %v, auto-delete %v; want false, true", b.ExchangeDurable, b.ExchangeAutoDelete)
	}
	err := b.ExchangeError("t.yaml", errors.New("it exists with other settings"))
	var ve *ValidationError
	if !errors.As(err, &ve) || err.Error() != "t.yaml:8: operations[0].publishes[0].amqp.exchange_durable: it exists with other settings" {
		t.Errorf("located error %q", err)
	}

	tg, probs = parseString(publishFile("", amqp(", create: true"), idBody, refData), nil)
	if probs != nil {
		t.Fatalf("problems: %v", probs)
	}
	if b := tg.Operations[0].Publishes[0].AMQP; !b.ExchangeDurable || b.ExchangeAutoDelete {
		t.Errorf("default durable %v, auto-delete %v; want true, false", b.ExchangeDurable, b.ExchangeAutoDelete)
	}
	if err := tg.Operations[0].Publishes[0].AMQP.ExchangeError("t.yaml", errors.New("x")); err.Error() != "t.yaml:8: operations[0].publishes[0].amqp: x" {
		t.Errorf("located error %q", err)
	}

	tg, probs = parseString(queueFile("amqp", `amqp: {url: "amqp://127.0.0.1/", exchange: jobs.x, routing_key: jobs, queue: jobs, create: true, exchange_auto_delete: true}`, ""), nil)
	if probs != nil {
		t.Fatalf("problems: %v", probs)
	}
	if b := tg.Consumers[0].AMQP; !b.ExchangeDurable || !b.ExchangeAutoDelete {
		t.Errorf("consumer durable %v, auto-delete %v; want true, true", b.ExchangeDurable, b.ExchangeAutoDelete)
	}

	at := func(line int, field, msg string) string {
		return "t.yaml:" + strconv.Itoa(line) + ": " + field + ": " + msg
	}
	cases := []struct {
		name, src string
		want      []string
	}{
		{"without create", publishFile("", amqp(", exchange_durable: false"), idBody, refData),
			[]string{at(8, "operations[0].publishes[0].amqp.exchange_durable", "applies only with create: true")}},
		{"not a boolean", publishFile("", amqp(", create: true, exchange_auto_delete: sometimes"), idBody, refData),
			[]string{at(8, "operations[0].publishes[0].amqp.exchange_auto_delete", `must be true or false, got "sometimes"`)}},
		{"on the default exchange", queueFile("amqp", `amqp: {url: "amqp://127.0.0.1/", queue: jobs, create: true, exchange_durable: false}`, ""),
			[]string{at(4, "consumers[0].amqp.exchange_durable", "the default exchange is never declared")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, probs := parseString(c.src, nil)
			wantProblems(t, probs, c.want)
		})
	}
}
