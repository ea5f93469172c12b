package main

import (
	"errors"
	"fmt"

	"github.com/majordomus-mcp/majordomus-mcp/internal/node"
)

// Exit codes (the CLI contract).
const (
	exitOK       = 0
	exitUsage    = 2  // the command line is wrong
	exitContract = 10 // the checkout's layer breaks its contract (invalid manifest, --strict on a degraded index)
	exitMissing  = 12 // something needed is missing (no checkout)
	exitInternal = 13 // anything else
)

// exitError carries an exit code with the message that explains it.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// withCode attaches an exit code to err.
func withCode(code int, err error) error { return &exitError{code: code, err: err} }

// usageError is a wrong command line.
func usageError(format string, v ...any) error {
	return withCode(exitUsage, fmt.Errorf(format, v...))
}

// codeOf returns the exit code an error calls for.
func codeOf(err error) int {
	if e, ok := errors.AsType[*exitError](err); ok {
		return e.code
	}
	if err != nil {
		return exitInternal
	}
	return exitOK
}

// nodeError gives what internal/node returned its exit code
// (node.FaultOf): no checkout or board page exits 12; a wrong flag
// (--profile, a timing that conflicts) exits 2; a layer that breaks its
// contract (its manifest's timings too) exits 10; anything else 13.
func nodeError(err error) error {
	if err == nil {
		return nil
	}
	return withCode(map[node.Fault]int{
		node.FaultInternal: exitInternal,
		node.FaultUsage:    exitUsage,
		node.FaultContract: exitContract,
		node.FaultMissing:  exitMissing,
	}[node.FaultOf(err)], err)
}
