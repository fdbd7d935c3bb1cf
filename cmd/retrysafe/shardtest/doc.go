// Package shardtest holds the end-to-end tests of a sharded load: four `retrysafe run --shard`
// processes against two reference API instances on PostgreSQL, then `retrysafe merge`, with the
// correct reference, with the race mutant (a duplicate whose executions came from two shards,
// which no shard alone can see), with a shard SIGKILLed mid-attack, and with sets merge must
// refuse. They run the binary named by $RETRYSAFE_BIN (ci/test.sh builds it once), or build one.
package shardtest
