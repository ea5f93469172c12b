package main

import (
	"bytes"
	"fmt"
)

// sha256Sums is SHA256SUMS in the form `sha256sum -c` and `shasum -a 256
// -c` read: the sum, two spaces, the file name.
func sha256Sums(arts []artifact) []byte {
	var b bytes.Buffer
	for _, a := range arts {
		fmt.Fprintf(&b, "%s  %s\n", a.sha256, a.name)
	}
	return b.Bytes()
}
