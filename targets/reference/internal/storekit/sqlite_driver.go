//go:build !retrysafe_nosqlite

package storekit

// The embedded SQLite driver registers itself as database/sql's "sqlite". A build with the tag
// retrysafe_nosqlite leaves it out: ci/fuzz.sh builds the fuzz targets' instrumented test
// binaries so, for instrumenting SQLite's translated C (with the rest of what they import) is
// most of their cost and none of them reaches it; nothing else may.
import _ "modernc.org/sqlite"
