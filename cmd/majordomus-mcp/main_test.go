package main

import (
	"os"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// mainArgsEnv makes the test binary run the product itself, with these
// arguments (separated by \x1f), so that a test can start it as a process
// where no separately built binary is at hand (Windows tests under wine).
const mainArgsEnv = "MAJORDOMUS_TEST_MAIN_ARGS"

func TestMain(m *testing.M) {
	if args, ok := os.LookupEnv(mainArgsEnv); ok {
		os.Exit(run(strings.Split(args, "\x1f"), os.Stdin, os.Stdout, os.Stderr))
	}
	goleak.VerifyTestMain(m)
}
