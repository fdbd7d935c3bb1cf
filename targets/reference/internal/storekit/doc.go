// Package storekit is the plumbing that the reference API (targets/reference) and the
// reference consumer (targets/reference/consumer) share under their stores: the SQL
// dialects and "?" rebinding, the numbered-migration runner, opening SQLite and PostgreSQL
// pools (DSN, WAL, the busy retry on the first connection, the write gate), the transaction
// helpers and the optimistic claim loop, opening Redis, scanning, pruning and purging a key
// prefix, releasing a claim hash, the Redis time encoding, cut-offs and expiries, the prune
// loop, and where each store is found by default.
//
// What is stored, and how a claim or a completion works, stays with each package: storekit
// knows no table but the version table it is told, and no Redis key but the prefix or key
// it is given. It is internal so that the two packages can change it together.
package storekit
