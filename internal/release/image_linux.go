package release

// runningImage names the code this process runs: /proc/self/exe is the file
// it was started from even when that name has since been given to another
// file (an upgrade renamed over it) or removed.
func runningImage() (string, error) { return "/proc/self/exe", nil }
