package layer

// NamesIgnoreCase reports whether the file system a checkout is on takes
// "local" and "LOCAL" for one name: NTFS does.
const NamesIgnoreCase = true
