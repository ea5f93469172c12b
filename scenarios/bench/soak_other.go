//go:build !unix

package main

import (
	"errors"
	"os"
	"time"
)

// SoakReport is what a soak found; the soak needs Unix signals (SIGSTOP).
type SoakReport struct{}

func (b *bench) soak(time.Duration, int, string) (*SoakReport, error) {
	return nil, errors.New("the soak stops and continues processes with Unix signals: run it on Linux or macOS")
}

func printSoak(*os.File, *SoakReport) {}
