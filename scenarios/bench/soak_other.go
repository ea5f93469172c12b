//go:build !unix

package main

import (
	"errors"
	"time"
)

func (b *bench) soak(time.Duration, int, string) (*SoakReport, error) {
	return nil, errors.New("the soak stops and continues processes with Unix signals: run it on Linux or macOS")
}
