package registry

// The lease directory carries a .gitignore that ignores everything in it,
// itself included: a lease carries its server's secret, and `git add -A` in
// a checkout where an agent runs must never stage one
// (docs/design.md#sharing-heals). It is written when the directory is made
// or found without one (makeLeaseDir), complete or not at all, and never
// through a link; whatever is already at its name is the user's and is left
// alone. Writing it is best effort: a client never loses its shared server
// for it.

// ignoreName is the file's name in the lease directory.
const ignoreName = ".gitignore"

// ignoreText is what it holds.
const ignoreText = "# Written by majordomus-mcp: nothing here belongs in git (a lease carries its server's secret).\n*\n"
