//go:build !unix

package main

import (
	"errors"
	"time"
)

func (b *bench) b9(int) ([]Figure, error) {
	return nil, errors.New("B9 freezes a process with SIGSTOP: run it on Linux or macOS")
}

func (b *bench) b10(int) ([]Figure, error) {
	return nil, errors.New("B10 freezes a process with SIGSTOP: run it on Linux or macOS")
}

func (b *bench) soak(time.Duration, int, string) (*SoakReport, error) {
	return nil, errors.New("the soak stops and continues processes with Unix signals: run it on Linux or macOS")
}
