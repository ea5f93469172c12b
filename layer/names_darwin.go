package layer

// NamesIgnoreCase reports whether the file system a checkout is on takes
// "local" and "LOCAL" for one name: APFS and HFS+ as macOS formats them
// do (and filepath.EvalSymlinks keeps the case a link wrote).
const NamesIgnoreCase = true
