package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/retrysafe/retrysafe/reports/profile"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/suites/probe"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/spf13/cobra"
)

func init() { extraCommands = append(extraCommands, newProbeCmd) }

// probeFlags are the flags of `retrysafe probe`.
type probeFlags struct {
	target  string
	out     string
	compare string
	suggest string
	json    bool
	opts    probe.Options
}

func newProbeCmd() *cobra.Command { return probeCommand(new(probeFlags)) }

// probeCommand is `retrysafe probe` with its flags bound to f.
func probeCommand(f *probeFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "probe FILE|--target FILE [--out profile.json] [--compare OLD.json] [--suggest NEW.yaml] [--key PREFIX]",
		Short: "Infer a target's idempotency behaviour, with evidence; notice when it changes",
		Long: `Send a small, bounded, non-destructive set of requests (no process faults, no load) to the
API a target file describes and infer its behaviour profile: replay and the replay header, the
status for a mismatch (mismatch_status: the variant_body and each body field and query parameter
changed on its own), the answer while in flight (in_flight), missing, empty and over-long keys and
the longest key accepted (searched), how much of a long key counts, the key forms, the scope of a
key across tenants, credentials and operations, and the error policy. Each field carries the
requests and responses it was inferred from and the records counted through the observers.

The probe runs on the same harness as 'retrysafe run': it starts the target's lifecycle if the
file declares one, serves its downstream sink, and runs its clean-up at the end. Keys follow each
operation's key.format (uuid, ulid, a template); --key PREFIX sends the keys of an earlier probe
again (its profile names the prefix). A fixed-shape key format skips the key-length search.

A field the probe cannot establish is not-probed, with the reason. in_flight and error_policy
need a way to hold or fail one request: the downstream sink (downstream.listen, or a lifecycle
that passes {{.Downstream}}), or else the target's hooks (hooks.slow holds the first attempt,
hooks.fail_next makes it fail; 'retrysafe serve --hooks' offers both). expired is never probed.

Under 'base: ietf' a value that contradicts a SHOULD of the IETF draft (400 without a key, 422
for another payload, 409 in flight, the original result replayed, an error included) is shown
as a deviation (JSON "deviation"), apart from unsafe values (a duplicate record, a response
served across tenants or operations, a 5xx to a race loser or to a malformed, missing or
over-long key, a stuck key).

The field names are the target file's profile fields. --suggest NEW.yaml writes the target file
given with its profile block replaced by the probed expectations: unsafe values are left out as
comments (the file keeps what it expected there), fields not probed keep the file's value; the
result loads like the original ('retrysafe validate NEW.yaml'), and 'retrysafe run --target
NEW.yaml' then passes on an API that behaves as probed and is correct. --out writes the profile
as JSON (schema retrysafe.profile/v1).

--compare OLD.json reports every behaviour field that changed since OLD.json, by name, with the
old and new evidence (a value, its unsafe mark or its deviation); fields not probed in either,
addresses and evidence are not compared.

Only loopback targets (localhost, 127.0.0.0/8, ::1) are probed unless --allow-remote; a remote
target is sent at most one request per --interval (default 200ms).

Exit codes: 0 the probe completed (and, with --compare, nothing changed); 1 with --compare, a
behaviour changed; 2 the probe could not run (bad file or flags, remote target refused,
unreachable target, refused baseline request, a harness part that could not start).`,
		Args:    cobra.ArbitraryArgs,
		PreRunE: func(cmd *cobra.Command, args []string) error { return targetFromArgs(cmd, &f.target, args) },
		RunE:    func(cmd *cobra.Command, _ []string) error { return runProbe(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.target, "target", "", "target file (required: this, or the file as the argument)")
	fl.StringVar(&f.out, "out", "", "write the profile as JSON to this file")
	fl.StringVar(&f.compare, "compare", "", "compare with a profile written earlier; exit 1 when a behaviour changed")
	fl.StringVar(&f.suggest, "suggest", "", "write the target file with its profile block replaced by the probed expectations to this file")
	fl.StringVar(&f.opts.KeyPrefix, "key", "", "prefix of every idempotency key (default: rs-<run id>); reuses an earlier probe's keys")
	fl.BoolVar(&f.opts.AllowRemote, "allow-remote", false, "allow a target that is not on this machine")
	fl.BoolVar(&f.json, "json", false, "print the profile as JSON instead of a table")
	fl.IntVar(&f.opts.MaxAttempts, "max-requests", probe.DefaultMaxAttempts, "most requests the probe may send")
	fl.IntVar(&f.opts.MaxFields, "max-fields", probe.DefaultMaxFields, "most body fields and query parameters changed one by one for mismatch_status")
	fl.DurationVar(&f.opts.AttemptTimeout, "attempt-timeout", probe.DefaultAttemptTimeout, "timeout of one request")
	fl.DurationVar(&f.opts.MinInterval, "interval", 0, "least time between two requests (default 0 locally, 200ms remote)")
	fl.DurationVar(&f.opts.HoldWindow, "hold-window", probe.DefaultHoldWindow, "how long an in-flight retry may wait before the target is judged to wait")
	return cmd
}

func runProbe(cmd *cobra.Command, f *probeFlags) error {
	if f.target == "" {
		return usageErr("the target file to probe is required: retrysafe probe FILE (or --target FILE)")
	}
	t, err := targets.Load(f.target)
	if err != nil {
		return usageErr("%v", err)
	}
	defer t.Close()
	var old *profile.Profile
	if f.compare != "" {
		if old, err = profile.ReadFile(f.compare); err != nil {
			return usageErr("--compare: %v", err)
		}
	}
	if cmd.Flags().Changed("interval") && f.opts.MinInterval == 0 {
		f.opts.MinInterval = -1 // an explicit 0: no pause, also for a remote target
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	f.opts.Tool = "retrysafe"
	f.opts.Log = cmd.ErrOrStderr()
	prof, err := probe.Run(ctx, t, f.opts)
	switch {
	case errors.Is(err, framework.ErrRemote):
		return usageErr("%v", err)
	case err != nil:
		return usageErr("probe %s: %v", t.Name, err)
	}
	out := cmd.OutOrStdout()
	if f.json {
		prof.Encode(out)
	} else {
		profile.WriteText(out, prof)
	}
	if f.out != "" {
		if err := prof.WriteFile(f.out); err != nil {
			return usageErr("--out: %v", err)
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "profile: %s\n", f.out)
	}
	if f.suggest != "" {
		if err := writeSuggestion(f.suggest, t, prof); err != nil {
			return usageErr("--suggest: %v", err)
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "suggested target file: %s (check it with: retrysafe run --target %s)\n", f.suggest, f.suggest)
	}
	if old == nil {
		return nil
	}
	if f.json {
		out = cmd.ErrOrStderr() // stdout holds the JSON alone
	}
	changes := profile.Compare(old, prof)
	fmt.Fprintf(out, "\ncompared with %s (probed %s):\n", f.compare, old.Started.Format(time.RFC3339))
	profile.WriteChanges(out, changes)
	if len(changes) > 0 {
		names := make([]string, len(changes))
		for i, c := range changes {
			names[i] = c.Field
		}
		return &exitError{exitViolation, fmt.Errorf("behaviour changed: %s", strings.Join(names, ", "))}
	}
	return nil
}

// writeSuggestion writes the target file t was loaded from with the probed expectations, and
// loads it back, so that a suggestion that would not load is never left behind.
func writeSuggestion(path string, t *targets.Target, prof *profile.Profile) error {
	src, err := os.ReadFile(t.Path)
	if err != nil {
		return err
	}
	data, err := probe.Suggest(src, t, prof)
	if err != nil {
		return err
	}
	back, err := targets.Parse(path, data, os.LookupEnv)
	if err != nil {
		return fmt.Errorf("the suggested file does not load (not written): %v", err)
	}
	back.Close()
	return os.WriteFile(path, data, 0o644)
}
