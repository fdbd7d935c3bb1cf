package main

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/retrysafe/retrysafe/targets/reference/client"
	"github.com/spf13/cobra"
)

func init() { extraCommands = append(extraCommands, newClientCmd) }

// clientFlags are the flags of `retrysafe client`.
type clientFlags struct {
	url, state, ref, opsFile, mutant, jitter string
	ops, sameRefAmount                       int
	policy                                   client.Policy
	headers                                  []string
	shouldRetryHeader                        string
	retryWhen                                []string
}

func newClientCmd() *cobra.Command {
	var f clientFlags
	cmd := &cobra.Command{
		Use:   "client",
		Short: "Run the reference idempotent client (optionally as a mutant) against an API",
		Long: `Run the reference client: it performs operations one after another, each a
POST URL/v1/orders with Content-Type: application/json, a fresh UUID v4 Idempotency-Key and
the body {"ref", "amount", "currency", "created_at"}, and retries each until it succeeds
(any 2xx) or fails finally.

Operations: without --ops-file, --ops N operations with refs PREFIX-1 .. PREFIX-N (--ref
PREFIX), amount 1000, currency eur; with --same-ref-amount A (or $RETRYSAFE_CLIENT_SAME_REF_AMOUNT)
the last of the N is PREFIX-1 again with amount A (N counts every operation, as a harness's
{{.Ops}} does). With --ops-file, one operation per entry of a JSON
array [{"ref": "...", "params": {"amount": 2000, ...}}, ...], params merged into the body
over the defaults; --ref is then unused and --ops, if given, must equal the entry count.
Two entries with one ref are two operations with two keys.

State: before an operation's first attempt its key and exact body are stored in --state
(one file per operation, op-NNNN.json; temp file, fsync, rename). Run again with the same
command line and directory after a kill: a pending operation resumes with its stored key
and body, a finished one is not sent again (its line is printed again).

Retries: on no response (refused, reset, closed, --attempt-timeout), any 5xx, 409 and 429,
at most --max-attempts (or $RETRYSAFE_CLIENT_MAX_ATTEMPTS) attempts per operation (counted
across restarts). Never on 400, 401,
403, 404, 422, any other 4xx, 1xx or 3xx. Retry n waits a delay drawn by --jitter below
min(--backoff-max, --backoff-initial * --backoff-multiplier^(n-1)): full from [10ms, cap],
equal from [cap/2, cap], none the cap; never under 10ms; and at least the Retry-After
(seconds or HTTP-date) of a 409, 429 or 503. --should-retry-header NAME decides over the
status when an answer carries it: "true" retries (a 400 too), "false" fails at once (a 503
too). --retry-when STATUS:JSONPATH=VALUE (repeatable) retries STATUS only when the answer's
JSON holds VALUE there (429:$.error.code=lock_timeout), and fails it at once otherwise.

Pending: an operation out of attempts none of which was answered (no response to any) may
or may not have been performed by the API: it is reported pending, not failed, and stays in
--state with its key and body; the next run with the same command line and directory resumes
it with max-attempts more.

Output: one line per operation on stdout, "ok REF key=KEY attempts=N" (key=- when none
was sent), "pending REF key=KEY attempts=N: REASON" or "failed REF: REASON"; one line per
attempt and wait on stderr.
Exit codes: 0 every operation succeeded; 1 at least one failed; 4 none failed and at least
one is pending; 2 bad flags, ops file or state directory; 3 interrupted by SIGINT or SIGTERM
(the attempt in flight is abandoned, its operation stays pending).

--mutant runs a deliberately broken client; 'retrysafe mutants' lists them (client:).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := f.config(cmd)
			if err != nil {
				return err
			}
			cfg.Out, cfg.Log = cmd.OutOrStdout(), cmd.ErrOrStderr()
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			sum, err := client.Run(ctx, cfg)
			switch {
			case errors.Is(err, client.ErrInterrupted):
				return &exitError{exitIncomplete, err}
			case err != nil:
				return usageErr("client: %v", err)
			case sum.Failed > 0:
				return &exitError{exitViolation, fmt.Errorf("client: %d of %d operations failed", sum.Failed, len(sum.Results))}
			case sum.Pending > 0:
				return &exitError{exitClientPending, fmt.Errorf("client: %d of %d operations pending (outcome unknown): run again with the same --state to resume them",
					sum.Pending, len(sum.Results))}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.url, "url", "", "the API's base URL, http://127.0.0.1:PORT (required)")
	fl.StringVar(&f.state, "state", "", "state directory, kept across restarts of the client (required; created if missing)")
	fl.StringVar(&f.ref, "ref", "", "ref prefix: operations are PREFIX-1 .. PREFIX-N (required without --ops-file)")
	fl.IntVar(&f.ops, "ops", 0, "number of operations (required without --ops-file; with it, must equal its entry count)")
	fl.StringVar(&f.opsFile, "ops-file", "", `JSON file of operations: [{"ref": "...", "params": {...}}, ...]`)
	fl.IntVar(&f.sameRefAmount, "same-ref-amount", 0, "without --ops-file, the last of the --ops operations is the first one's ref with this amount (default $"+sameRefEnv+")")
	fl.StringVar(&f.mutant, "mutant", "", "run a deliberately broken client (see `retrysafe mutants`)")
	fl.IntVar(&f.policy.MaxAttempts, "max-attempts", client.DefaultMaxAttempts, "attempts per operation, the first included (default $"+maxAttemptsEnv+" when set)")
	fl.DurationVar(&f.policy.AttemptTimeout, "attempt-timeout", client.DefaultAttemptTimeout, "bound of one attempt; the client then closes its connection")
	fl.DurationVar(&f.policy.Initial, "backoff-initial", client.DefaultBackoffInitial, "backoff cap of the first retry")
	fl.Float64Var(&f.policy.Multiplier, "backoff-multiplier", client.DefaultBackoffMultiplier, "factor of the backoff cap from one retry to the next")
	fl.DurationVar(&f.policy.Max, "backoff-max", client.DefaultBackoffMax, "largest backoff cap")
	fl.StringVar(&f.jitter, "jitter", string(client.DefaultJitter), "how a delay is drawn below its cap: full, equal or none")
	fl.StringArrayVar(&f.headers, "header", nil, `"Name: value" sent with every attempt (credentials, say); repeatable`)
	fl.StringVar(&f.shouldRetryHeader, "should-retry-header", "", `a header of the answers that decides over the status: "true" retries, "false" fails at once`)
	fl.StringArrayVar(&f.retryWhen, "retry-when", nil, "STATUS:JSONPATH=VALUE: retry STATUS only when the answer's JSON holds VALUE there; repeatable")
	return cmd
}

// config checks the flags and returns the client's configuration; its errors are exit 2.
func (f *clientFlags) config(cmd *cobra.Command) (client.Config, error) {
	var err error
	cfg := client.Config{BaseURL: f.url, StateDir: f.state, Policy: f.policy}
	if v, ok := os.LookupEnv(maxAttemptsEnv); ok && !cmd.Flags().Changed("max-attempts") {
		if cfg.Policy.MaxAttempts, err = strconv.Atoi(v); err != nil || cfg.Policy.MaxAttempts < 1 {
			return cfg, usageErr("$%s %q: want a positive number of attempts", maxAttemptsEnv, v)
		}
		f.policy.MaxAttempts = cfg.Policy.MaxAttempts
	}
	for _, h := range f.headers {
		name, value, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(name) == "" {
			return cfg, usageErr("--header %q: want \"Name: value\"", h)
		}
		if cfg.Header == nil {
			cfg.Header = http.Header{}
		}
		cfg.Header.Add(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	cfg.ShouldRetryHeader = strings.TrimSpace(f.shouldRetryHeader)
	for _, w := range f.retryWhen {
		rw, err := client.ParseRetryWhen(w)
		if err != nil {
			return cfg, usageErr("--retry-when %v", err)
		}
		cfg.RetryWhen = append(cfg.RetryWhen, rw)
	}
	if cfg.Mutant, err = client.ParseMutant(f.mutant); err != nil {
		return cfg, usageErr("--mutant: %v", err)
	}
	if cfg.Policy.Jitter, err = client.ParseJitter(f.jitter); err != nil {
		return cfg, usageErr("--jitter: %v", err)
	}
	if err := cfg.Policy.Check(); err != nil {
		return cfg, usageErr("%v", err)
	}
	for _, z := range []struct {
		flag string
		zero bool
	}{
		{"max-attempts", f.policy.MaxAttempts == 0}, {"attempt-timeout", f.policy.AttemptTimeout == 0},
		{"backoff-initial", f.policy.Initial == 0}, {"backoff-max", f.policy.Max == 0},
	} {
		if z.zero {
			return cfg, usageErr("--%s %s: must be positive", z.flag, cmd.Flags().Lookup(z.flag).Value)
		}
	}
	switch {
	case f.url == "":
		return cfg, usageErr("--url: the API's base URL is required (http://127.0.0.1:PORT)")
	case f.state == "":
		return cfg, usageErr("--state: a state directory is required (it keeps pending operations across restarts)")
	case f.opsFile != "":
		if cfg.Ops, err = client.ReadOpsFile(f.opsFile); err != nil {
			return cfg, usageErr("--ops-file %v", err)
		}
		if cmd.Flags().Changed("ops") && f.ops != len(cfg.Ops) {
			return cfg, usageErr("--ops %d, but --ops-file %s has %d entries: give the entry count or leave --ops out", f.ops, f.opsFile, len(cfg.Ops))
		}
	case f.ref == "":
		return cfg, usageErr("--ref: a ref prefix is required without --ops-file (operations are PREFIX-1 .. PREFIX-N)")
	case f.ops < 1:
		return cfg, usageErr("--ops %d: at least 1 operation is needed (or give --ops-file)", f.ops)
	default:
		cfg.Ops = client.Operations(f.ref, f.ops)
		amount := f.sameRefAmount
		if v, ok := os.LookupEnv(sameRefEnv); ok && !cmd.Flags().Changed("same-ref-amount") {
			if amount, err = strconv.Atoi(v); err != nil || amount < 1 {
				return cfg, usageErr("$%s %q: want a positive amount", sameRefEnv, v)
			}
		}
		if amount > 0 && f.ops < 2 {
			return cfg, usageErr("--ops %d with a same-ref amount: at least 2 are needed (the last is the first one's ref with amount %d)", f.ops, amount)
		}
		if amount > 0 {
			cfg.Ops[len(cfg.Ops)-1] = client.Operation{Ref: cfg.Ops[0].Ref, Params: map[string]any{"amount": amount}}
		}
	}
	if f.opsFile != "" && cmd.Flags().Changed("same-ref-amount") {
		return cfg, usageErr("--same-ref-amount: with --ops-file, write the operation into the file")
	}
	return cfg, nil
}

// exitClientPending is the exit status of a client run that left an operation pending (and
// failed none): its outcome is unknown, and the next run resumes it.
const exitClientPending = 4

// maxAttemptsEnv is the environment variable --max-attempts defaults to: how a harness's
// configuration (clients[].configurations[].env) sets the client's attempts.
const maxAttemptsEnv = "RETRYSAFE_CLIENT_MAX_ATTEMPTS"

// sameRefEnv is the environment variable --same-ref-amount defaults to: how a harness asks the
// client for a second operation with the first one's ref without an ops file.
const sameRefEnv = "RETRYSAFE_CLIENT_SAME_REF_AMOUNT"
