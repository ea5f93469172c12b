//go:build !darwin && !windows

package layer

// NamesIgnoreCase reports whether the file system a checkout is on takes
// "local" and "LOCAL" for one name: not as Linux's are made (a directory
// ext4 folds, or a FAT volume, is not told apart).
const NamesIgnoreCase = false
