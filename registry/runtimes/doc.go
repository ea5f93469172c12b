// Package runtimes keeps the evidence of fleet inventories (docs/fleet.md): the
// runtime registry ([DB], [Read]) is one SQLite database per user
// (modernc.org/sqlite, pure Go), at [Path]: every shared server writes one
// row (a fleet.Row, the one description of it) about itself right after its HTTP
// bind, records lease-lost in it, and removes it on a clean exit. Writers use
// WAL, a busy timeout and BEGIN IMMEDIATE transactions: with deferred
// transactions, processes that read then write fail at once with
// SQLITE_BUSY whatever the busy timeout, because SQLite cannot wait on a
// lock upgrade (four racing processes fail without immediate transactions,
// and none fail with them: scenarios/bench/README.md). Readers open the file
// read-only and query-only, and never create it, so an inventory changes no
// byte of it, but to roll back a write cut off (its writer killed) as any
// SQLite client that may write does. The schema is versioned in
// user_version ([SchemaVersion]); migrations are additive and idempotent,
// run in one immediate transaction, and a newer database stays usable by
// an older binary.
package runtimes
