// Package examples embeds the example target files, so that the retrysafe binary can test
// its own reference API without any file on disk.
package examples

import _ "embed"

// Reference is targets/examples/reference.yaml: the reference API at ${RETRYSAFE_URL}.
//
//go:embed reference.yaml
var Reference []byte
