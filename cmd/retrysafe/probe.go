package main

import (
	"errors"
	"fmt"
	"github.com/retrysafe/retrysafe/reports/profile"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/retrysafe/retrysafe/suites/probe"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/spf13/cobra"
)

func init() { extraCommands = append(extraCommands, newProbeCmd) }

// probeFlags are the flags of `retrysafe probe`.
type probeFlags struct {
	target      string
	out         string
	compare     string
	allowRemote bool
	json        bool
	opts        probe.Options
}

func newProbeCmd() *cobra.Command {
	var f probeFlags
	cmd := &cobra.Command{
		Use:   "probe --target FILE [--out profile.json] [--compare OLD.json]",
		Short: "Infer a target's idempotency behaviour, with evidence; notice when it changes",
		Long: `Send a small, bounded, non-destructive set of requests (no process faults, no load) to the
API a target file describes and infer its behaviour profile: replay and the replay header, the
status for a mismatch (mismatch_status), the answer while in flight (in_flight), missing, empty
and over-long keys and the longest key accepted (searched), how much of a long key counts, the key
forms, the scope of a key across tenants and operations, and the error policy. Each field carries
the requests and responses it was inferred from and the records counted through the observers.
A field the probe cannot establish is not-probed: in_flight and error_policy need a downstream
with a fixed listen address (the probe serves it, holds or fails its answers); expired is never
probed.

The field names are the target file's profile fields, so the probed values can be pasted in as
expectations. --out writes the profile as JSON (schema retrysafe.profile/v1).

--compare OLD.json reports every behaviour field that changed since OLD.json, by name, with the
old and new evidence; fields not probed in either, addresses and evidence are not compared.

Only loopback targets (localhost, 127.0.0.0/8, ::1) are probed unless --allow-remote; a remote
target is sent at most one request per --interval (default 200ms).

Exit codes: 0 the probe completed (and, with --compare, nothing changed); 1 with --compare, a
behaviour changed; 2 the probe could not run (bad file or flags, unreachable target, refused
baseline request).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runProbe(cmd, &f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.target, "target", "", "target file (required)")
	fl.StringVar(&f.out, "out", "", "write the profile as JSON to this file")
	fl.StringVar(&f.compare, "compare", "", "compare with a profile written earlier; exit 1 when a behaviour changed")
	fl.BoolVar(&f.allowRemote, "allow-remote", false, "allow a target that is not on this machine")
	fl.BoolVar(&f.json, "json", false, "print the profile as JSON instead of a table")
	fl.IntVar(&f.opts.MaxAttempts, "max-requests", probe.DefaultMaxAttempts, "most requests the probe may send")
	fl.DurationVar(&f.opts.AttemptTimeout, "attempt-timeout", probe.DefaultAttemptTimeout, "timeout of one request")
	fl.DurationVar(&f.opts.MinInterval, "interval", 0, "least time between two requests (default 0 locally, 200ms remote)")
	fl.DurationVar(&f.opts.HoldWindow, "hold-window", probe.DefaultHoldWindow, "how long an in-flight retry may wait before the target is judged to wait")
	return cmd
}

func runProbe(cmd *cobra.Command, f *probeFlags) error {
	if f.target == "" {
		return usageErr("--target is required (the target file to probe)")
	}
	t, err := targets.Load(f.target)
	if err != nil {
		return usageErr("%v", err)
	}
	defer t.Close()
	if err := probe.CheckLocal(t); err != nil {
		if !f.allowRemote {
			return usageErr("%v", err)
		}
		if !cmd.Flags().Changed("interval") {
			f.opts.MinInterval = probe.DefaultRemoteInterval
		}
	}
	var old *profile.Profile
	if f.compare != "" {
		if old, err = profile.ReadFile(f.compare); err != nil {
			return usageErr("--compare: %v", err)
		}
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	f.opts.Tool = "retrysafe"
	prof, err := probe.Run(ctx, t, f.opts)
	if err != nil {
		if errors.Is(err, probe.ErrUnreachable) && t.Lifecycle != nil {
			err = fmt.Errorf("%w (the probe does not start a target's lifecycle: start it first)", err)
		}
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
