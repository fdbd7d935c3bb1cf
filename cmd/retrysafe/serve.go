package main

import (
	"log"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/retrysafe/retrysafe/targets/reference"
	"github.com/spf13/cobra"
)

func newServeCmd() *cobra.Command {
	var (
		opts      reference.ServeOptions
		tenants   string
		mutant    string
		keyFormat string
		auth      string
		cons      *consumerFlags
		events    *eventsFlags
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the reference API (optionally as a mutant)",
		Long: `Run the reference orders API: POST /v1/orders and POST /v1/refunds with Idempotency-Key,
GET /v1/orders?ref=X and GET /v1/refunds?ref=X to count records, GET /healthz.
Prints "listening on http://HOST:PORT" once ready; SIGINT/SIGTERM shut it down cleanly.

Shape options give the API another face, so that checks are proven on APIs unlike it:
--key-format uuid (only UUID keys), --auth none (the tenant is the X-Tenant header),
--mismatch-status N, and --hooks: POST /_test/fail (optional body {"status": 503}) makes
the next claimed POST fail as a handler error would, X-Test-Delay: MS on a POST widens
its in-flight window by MS milliseconds (at most 60000), and POST /_test/hold-publish holds
every later publication of an event between the commit and the publish (GET answers
{"held": N, "holding": BOOL}, DELETE lets them go; the process's end ends it too).

--events amqp|nats|webhook makes every new order publish an order.created event through a
transactional outbox: the event is written with the order, in its transaction, and a relay
publishes it after the commit, at least once, under its stable id (RabbitMQ: publisher confirms,
the id in message_id, to --events-exchange with --events-routing-key; JetStream: the id in
Nats-Msg-Id, the stream's ack, on --events-subject of --events-stream; webhook: a POST of the
JSON to --events-url, the id in Event-Id, signed with --events-signing, a 2xx), marks it sent
only once confirmed, and
retries with backoff: an event that no queue is bound for (RabbitMQ returns it) or no stream
stores stays pending. The event: {"id", "type", "created", "sent_at", "tenant", "data": the order
as POST answered it}; sent_at differs between two publications of one event.

--consumer webhook|amqp|nats serves the reference event consumer instead: it deduplicates
deliveries on the event id (POST /webhooks, or messages from --broker-url), applies each
event's effect once (GET /v1/effects?event=ID counts them; it calls --downstream), keeps
each object's newest version (GET /v1/objects/ID), and verifies --signing. With --hooks it
offers POST /_test/fail?event=ID&when=POINT (the next handling of that event, or of any event
without event=, fails at the point: before-effect, the default, or after-effect, once its effect
committed), DELETE /_test/fail (disarms them all), the X-Test-Fail header (the handling of a
delivery that carries it fails at the point it names, unless the delivery is a redelivery), the
X-Test-Delay header that slows one handling (both of a webhook request or a queue message) and
the EFFECT_DELAY_MS environment variable that slows every handling; --id-from says where a
delivery carries the event id (transport, body, or header:NAME). The consumer's mutants are
listed by 'retrysafe mutants'.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if cons.transport != "" {
				return serveConsumer(ctx, cmd, cons, serveCommon{addr: opts.Addr, store: opts.Store, dsn: opts.DSN, mutant: mutant,
					downstream: opts.Config.Downstream, lockTimeout: opts.Config.LockTimeout,
					downstreamTimeout: opts.Config.DownstreamTimeout, workDelay: opts.Config.WorkDelay, hooks: opts.Config.Hooks, reusePort: opts.ReusePort})
			}
			m, err := reference.ParseMutant(mutant)
			if err != nil {
				return usageErr("--mutant: %v", err)
			}
			opts.Config.Mutant = m
			if opts.Config.KeyFormat, err = reference.ParseKeyFormat(keyFormat); err != nil {
				return usageErr("--key-format: %v", err)
			}
			if opts.Config.Auth, err = reference.ParseAuthMode(auth); err != nil {
				return usageErr("--auth: %v", err)
			}
			if err := reference.CheckMismatchStatus(opts.Config.MismatchStatus); err != nil {
				return usageErr("--mismatch-status: %v", err)
			}
			pub, err := events.publisher()
			if err != nil {
				return usageErr("--events: %v", err)
			}
			if pub != nil {
				defer pub.Close()
				opts.Config.Events = &reference.EventsConfig{Publisher: pub}
			}
			opts.Config.Tenants = append(opts.Config.Tenants, splitList(tenants)...)
			if len(opts.Config.Tenants) == 0 {
				return usageErr("--tenants: at least one tenant is required")
			}
			opts.Out = cmd.OutOrStdout()
			opts.Log = log.New(os.Stderr, "retrysafe serve: ", log.LstdFlags)
			if err := reference.Serve(ctx, opts); err != nil {
				return usageErr("serve: %v", err)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Addr, "addr", "127.0.0.1:8080", "listen address (port 0 picks a free port)")
	f.BoolVar(&opts.ReusePort, "reuse-port", false, "listen with SO_REUSEPORT: take a port that the harness which starts this process keeps reserved across its restarts (bound, never listened on), so that nothing else can take it between a kill and the restart")
	f.StringVar(&opts.Store, "store", "sqlite", "key and record store: memory, sqlite, postgres, redis")
	f.StringVar(&opts.DSN, "dsn", "", "store location (default: $"+reference.EnvPostgresDSN+" or "+reference.DefaultPostgresDSN+
		"; $"+reference.EnvRedisURL+" or "+reference.DefaultRedisURL+"; a SQLite file in a temp dir)")
	f.StringVar(&tenants, "tenants", "alice,bob", "comma-separated tenant names; a tenant's bearer token (or, with --auth none, its X-Tenant header) is its name")
	f.StringVar(&mutant, "mutant", "", "run a deliberately broken mode (see `retrysafe mutants`)")
	f.DurationVar(&opts.Config.Retention, "retention", reference.DefaultRetention, "keys older than this are treated as new")
	f.DurationVar(&opts.Config.LockTimeout, "lock-timeout", reference.DefaultLockTimeout, "an in-progress key older than this may be taken over by a retry")
	f.StringVar(&opts.Config.Downstream, "downstream", "", "URL of a downstream provider to POST a charge to before writing the record")
	f.DurationVar(&opts.Config.DownstreamTimeout, "downstream-timeout", reference.DefaultDownstreamTimeout, "timeout of the downstream call")
	f.DurationVar(&opts.Config.WorkDelay, "work-delay", reference.DefaultWorkDelay,
		"simulated processing time between claiming a key and writing the record, as a real handler spends calling a provider (0 = none)")
	f.StringVar(&keyFormat, "key-format", string(reference.KeyFormatAny), "keys accepted: any, or uuid (canonical 8-4-4-4-12 hex; anything else is 400)")
	f.StringVar(&auth, "auth", string(reference.AuthBearer), "how the tenant is known: bearer (Authorization: Bearer <tenant>, else 401) or none (X-Tenant: <tenant>, else 400)")
	f.BoolVar(&opts.Config.Hooks, "hooks", false, "serve the test hooks: POST "+reference.FailPath+", the "+reference.DelayHeader+" header and "+
		reference.HoldPublishPath+" (POST holds the publications, GET counts them, DELETE lets them go)")
	f.IntVar(&opts.Config.MismatchStatus, "mismatch-status", http.StatusUnprocessableEntity, "status of a reused key with another payload (400 to 499)")
	cons = addConsumerFlags(cmd)
	events = addEventsFlags(cmd)
	addAsyncFlags(cmd, &opts.Config)
	return cmd
}
