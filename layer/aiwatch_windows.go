package layer

// Windows tells no watch of its own directory's move (only of its
// entries'): .ai's is heard from the root's watch, at the cost of waking
// for every change beside it.
const watchRootForAI = true
