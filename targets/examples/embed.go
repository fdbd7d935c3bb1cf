// Package examples embeds the example target files, so that the retrysafe binary can test
// its own reference API without any file on disk.
package examples

import _ "embed"

// Reference is targets/examples/reference.yaml: the reference API at ${RETRYSAFE_URL}.
//
//go:embed reference.yaml
var Reference []byte

// ReferenceManaged is targets/examples/reference-managed.yaml: the reference API started by
// the harness through a lifecycle, bound to the harness's downstream sink.
//
//go:embed reference-managed.yaml
var ReferenceManaged []byte
