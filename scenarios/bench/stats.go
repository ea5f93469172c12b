package main

import (
	"math"
	"slices"
	"time"
)

// Summary describes one series of samples. Times are in milliseconds,
// memory in MiB; Unit says which.
type Summary struct {
	Unit   string  `json:"unit"`
	N      int     `json:"n"`
	Median float64 `json:"median"`
	P90    float64 `json:"p90"`
	P99    float64 `json:"p99"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	Mean   float64 `json:"mean"`
}

// summary computes the order statistics of the samples (nearest rank:
// with fewer than 100 samples p99 is the largest one, with fewer than 10
// so is p90).
func (r *series) summary() Summary {
	s := Summary{Unit: r.unit, N: len(r.values)}
	if len(r.values) == 0 {
		return s
	}
	v := slices.Sorted(slices.Values(r.values))
	sum := 0.0
	for _, x := range v {
		sum += x
	}
	percentile := func(p float64) float64 { // nearest rank
		rank := int(math.Ceil(p / 100 * float64(len(v))))
		return round(v[min(max(rank, 1), len(v))-1])
	}
	s.Median, s.P90, s.P99 = percentile(50), percentile(90), percentile(99)
	s.Min, s.Max, s.Mean = round(v[0]), round(v[len(v)-1]), round(sum/float64(len(v)))
	return s
}

// stat returns the named statistic ("p50", "p90", "p99", "min", "max").
func (s Summary) stat(name string) float64 {
	switch name {
	case "p90":
		return s.P90
	case "p99":
		return s.P99
	case "min":
		return s.Min
	case "max":
		return s.Max
	default:
		return s.Median
	}
}

// round keeps four significant decimals: enough for microseconds in ms.
func round(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// ms converts a duration to milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// series collects samples of one measure.
type series struct {
	unit   string
	values []float64
}

func newSeries(unit string) *series { return &series{unit: unit} }

func (s *series) add(v float64)          { s.values = append(s.values, v) }
func (s *series) addDur(d time.Duration) { s.add(ms(d)) }
