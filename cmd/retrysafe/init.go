package main

import (
	"fmt"
	"os"

	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/openapi"
	"github.com/spf13/cobra"
)

func init() { extraCommands = append(extraCommands, newInitCmd) }

// defaultInitFile is where `retrysafe init` writes when --out is not given.
const defaultInitFile = "retrysafe-target.yaml"

func newInitCmd() *cobra.Command {
	var (
		spec, out     string
		allPost, over bool
	)
	cmd := &cobra.Command{
		Use:   "init [--openapi SPEC] [--out FILE]",
		Short: "Write a target file: from an OpenAPI 3 document, or a commented starter",
		Long: `Write a target file. With --openapi, from an OpenAPI 3 document (YAML or JSON): one
operation per operation that declares an idempotency-key header parameter (with --all-post, every
POST), its request body from the spec's examples or generated from its schema with {{.Ref}} in the
field that looks like a reference (else the first string field), a variant_body that changes one
other field, the key header's name, an observer when a GET on the same path filters by that field
and returns a count, and two tenants whose headers come from the security schemes, with ${ENV}
placeholders for the credentials. Without --openapi, a commented starter file.

The file is checked as 'retrysafe validate' would before the command ends. --out - writes to
standard output. An existing file is not replaced unless --force.

Exit codes: 0 written; 2 the document could not be read, has no operation to test, or the file
could not be written.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			data := []byte(openapi.Starter)
			if spec != "" {
				var err error
				if data, err = openapi.FromFile(spec, openapi.Options{AllPost: allPost}); err != nil {
					return usageErr("%v", err)
				}
			} else if allPost {
				return usageErr("--all-post needs --openapi")
			}
			if out == "-" {
				_, err := cmd.OutOrStdout().Write(data)
				return err
			}
			if _, err := os.Stat(out); err == nil && !over {
				return usageErr("%s exists; pass --force to replace it, or --out another file", out)
			}
			if err := os.WriteFile(out, data, 0o644); err != nil {
				return usageErr("%v", err)
			}
			if problems, _ := targets.Validate(out); len(problems) > 0 {
				msg := ""
				for _, p := range problems {
					msg += "\n" + p.String()
				}
				return usageErr("%s was written but does not validate (please report this):%s", out, msg)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s\nnext: review it, then retrysafe validate %s; retrysafe probe --target %s\n", out, out, out)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&spec, "openapi", "", "OpenAPI 3 document (YAML or JSON) to generate the target file from")
	fl.StringVar(&out, "out", defaultInitFile, "file to write (- for standard output)")
	fl.BoolVar(&allPost, "all-post", false, "with --openapi: take every POST, not only operations declaring an idempotency key")
	fl.BoolVar(&over, "force", false, "replace an existing --out file")
	return cmd
}
