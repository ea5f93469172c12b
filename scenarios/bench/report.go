package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Figure is one line of the table: a measure, its baseline from the same
// run, their ratio at the named statistic, and whether the goal is met.
type Figure struct {
	ID       string         `json:"id"`
	Measure  string         `json:"measure"`
	Stat     string         `json:"stat"` // the statistic compared: p50, p99, max
	Value    Summary        `json:"value"`
	Baseline string         `json:"baseline,omitempty"`
	Base     *Summary       `json:"baseline_value,omitempty"`
	Ratio    float64        `json:"ratio,omitempty"`       // rounded to two decimals, as printed
	Exact    float64        `json:"ratio_exact,omitempty"` // the ratio the goal is judged on
	Goal     string         `json:"goal"`
	Result   string         `json:"result"` // met, missed, skipped, info
	Note     string         `json:"note,omitempty"`
	Extra    map[string]any `json:"extra,omitempty"`
}

// compare is value against base at stat; the goal is met when the ratio
// value/base is at most limit.
func compare(id, measure, stat string, value *series, baseline string, base *series, limit float64, goal string) Figure {
	v, bs := value.summary(), base.summary()
	f := Figure{ID: id, Measure: measure, Stat: stat, Value: v, Baseline: baseline, Base: &bs, Goal: goal}
	exact, ok := 0.0, false // no baseline, no ratio
	if b := bs.stat(stat); b != 0 {
		exact, ok = v.stat(stat)/b, true
	}
	f.Ratio, f.Exact = math.Round(exact*100)/100, exact // as printed; the goal is judged on exact
	// A zero baseline gives no ratio, and so proves no ratio goal met.
	f.Result = verdict(exact <= limit && (ok || math.IsInf(limit, 1)))
	if len(value.values) == 0 || len(base.values) == 0 {
		f.Result = "not measured" // no samples prove nothing, least of all a goal
	}
	return f
}

// absolute is a figure with an absolute goal (value at stat ≤ limit) and
// an informative baseline.
func absolute(id, measure, stat string, value *series, baseline string, base *series, limit float64, goal string) Figure {
	f := compare(id, measure, stat, value, baseline, base, math.Inf(1), goal)
	if len(value.values) > 0 {
		f.Result = verdict(f.Value.stat(stat) <= limit)
	}
	return f
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "missed"
}

// Report is the JSON file.
type Report struct {
	Schema   string    `json:"schema"`
	Started  string    `json:"started"`
	Seconds  float64   `json:"seconds"`
	Command  string    `json:"command"`
	Quick    bool      `json:"quick"`
	Machine  Machine   `json:"machine"`
	Commit   string    `json:"commit"`
	Dirty    bool      `json:"dirty"`
	Settings Settings  `json:"settings"`
	Figures  []Figure  `json:"figures"`
	Notes    []string  `json:"notes,omitempty"`
	Errors   []string  `json:"errors,omitempty"`
	Peers    []PeerPkg `json:"npm_peers,omitempty"`
}

// Settings are the repetitions the run used.
type Settings struct {
	Runs   int `json:"runs"`
	Warmup int `json:"warmup"`
	Calls  int `json:"calls"`
	Storm  int `json:"storm_clients"`
}

// PeerPkg is an npm bridge the run measured.
type PeerPkg struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

func writeJSON(path string, r any) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// printTable writes the figures as a Markdown table, then each series in
// full, then the notes.
func printTable(w io.Writer, r *Report) {
	fmt.Fprintf(w, "\nmajordomus-mcp benchmarks — commit %s%s, %s, %d cores, %s, %s\n\n",
		r.Commit[:min(12, len(r.Commit))], map[bool]string{true: " (+ uncommitted changes)", false: ""}[r.Dirty],
		r.Machine.CPU, r.Machine.Cores, r.Machine.Go, r.Machine.Kernel)
	fmt.Fprintln(w, "| id | measure | figure | baseline (same run) | ratio | goal | result |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, f := range r.Figures {
		base, ratio := "—", "—"
		if f.Base != nil {
			base = fmt.Sprintf("%s: %s", f.Baseline, quantity(f.Base.stat(f.Stat), f.Base.Unit, f.Stat))
		} else if f.Baseline != "" {
			base = f.Baseline
		}
		if f.Ratio != 0 {
			ratio = fmt.Sprintf("%.2f×", f.Ratio)
		}
		value := quantity(f.Value.stat(f.Stat), f.Value.Unit, f.Stat)
		if f.Result == "skipped" {
			value = "skipped"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", f.ID, f.Measure, value, base, ratio, f.Goal, f.Result)
	}
	fmt.Fprintln(w, "\n| id | series | unit | n | median | p90 | p99 | min | max |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	printed := map[string]bool{} // a series shared by two figures is printed once
	for _, f := range r.Figures {
		if key := fmt.Sprint(f.Value); f.Value.N > 0 && !printed[key] {
			printed[key] = true
			row(w, f.ID, f.Measure, f.Value)
		}
		if f.Base == nil || f.Base.N == 0 {
			continue
		}
		if key := fmt.Sprint(*f.Base); !printed[key] {
			printed[key] = true
			row(w, f.ID, "baseline: "+f.Baseline, *f.Base)
		}
	}
	said := map[string]bool{}
	for _, f := range r.Figures {
		if f.Note != "" && !said[f.ID+f.Note] {
			said[f.ID+f.Note] = true
			fmt.Fprintf(w, "\n- %s: %s", f.ID, f.Note)
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "\n- %s", n)
	}
	for _, e := range r.Errors {
		fmt.Fprintf(w, "\n- ERROR: %s", e)
	}
	fmt.Fprintln(w)
}

func row(w io.Writer, id, name string, s Summary) {
	fmt.Fprintf(w, "| %s | %s | %s | %d | %s | %s | %s | %s | %s |\n", id, name, s.Unit, s.N,
		num(s.Median), num(s.P90), num(s.P99), num(s.Min), num(s.Max))
}

// quantity prints a statistic with its unit.
func quantity(v float64, unit, stat string) string {
	return fmt.Sprintf("%s %s %s", stat, num(v), unit)
}

// num prints three significant digits, no exponent.
func num(v float64) string {
	switch a := math.Abs(v); {
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	case a >= 1:
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.3f", v)
	}
}

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

// SoakReport is what a soak found.
type SoakReport struct {
	Schema             string            `json:"schema"`
	Started            string            `json:"started"`
	Seconds            float64           `json:"seconds"`
	Clients            int               `json:"clients"`
	Commit             string            `json:"commit"`
	Requests           int64             `json:"requests"`
	Answered           int64             `json:"answered"`
	Unanswered         int64             `json:"unanswered"`
	Errors             map[string]int    `json:"errors"`
	ErrorSamples       map[string]string `json:"error_samples"` // the first of each kind, whole
	KilledMidCall      int64             `json:"killed_mid_call"`
	Chaos              map[string]int    `json:"chaos"`
	TwoAdmitting       int               `json:"moments_two_admitting"`
	Samples            int               `json:"admission_samples"`
	OffBoard           int               `json:"clients_off_the_leaseholders_board"`
	Boards             int               `json:"boards_at_the_end"`     // servers the clients were served by, each alone one counted
	AloneAtTheEnd      int               `json:"alone_at_the_end"`      // clients served alone once the harms had ended
	OnTheBoard         int               `json:"attached_on_the_board"` // peers the leaseholder's board lists attached
	SettledSeconds     float64           `json:"settled_seconds"`       // from the end of the harms to one board (or the bound)
	Notified           int64             `json:"notified"`              // clients told of an edit within a call's bound
	NotificationsLost  int64             `json:"notifications_lost"`    // clients not told, though alive and unharmed
	History            map[string]int    `json:"history"`               // what the checks of the history after take-overs found
	LongestCallSeconds float64           `json:"longest_call_seconds"`  // the longest answered call
	LeaseholderPeakMiB float64           `json:"leaseholder_peak_mib"`  // the highest VmHWM of a leaseholder, sampled every 250 ms
	LeftProcesses      int               `json:"leftover_processes"`
	LeftLease          bool              `json:"leftover_lease"`
	ClientsAtTheEnd    int               `json:"clients_at_the_end"`
	EndLease           string            `json:"end_lease"`  // what the lease held when the clients were checked
	EndServed          []string          `json:"end_served"` // where each was served, and as what
	EndBoard           []string          `json:"end_board"`  // the attached peers, as majordomus_peers gave them
}

// printSoak writes the soak's figures as a Markdown table.
func printSoak(w io.Writer, r *SoakReport) {
	fmt.Fprintf(w, "\n| soak: %d clients, %.0f s | figure | goal |\n|---|---|---|\n", r.Clients, r.Seconds)
	fmt.Fprintf(w, "| requests | %d | — |\n| answered | %d | — |\n| unanswered | %d | 0 |\n", r.Requests, r.Answered, r.Unanswered)
	fmt.Fprintf(w, "| calls cut off by killing their own client | %d | — |\n", r.KilledMidCall)
	fmt.Fprintf(w, "| the longest answered call | %.1f s | — |\n| peak RSS of a leaseholder | %.1f MiB | — |\n", r.LongestCallSeconds, r.LeaseholderPeakMiB)
	for _, k := range slices.Sorted(maps.Keys(r.Errors)) {
		fmt.Fprintf(w, "| error: %s | %d | 0 (every tool may be resent) |\n", k, r.Errors[k])
	}
	fmt.Fprintf(w, "| moments two servers admitted new sessions | %d of %d samples | 0 |\n", r.TwoAdmitting, r.Samples)
	fmt.Fprintf(w, "| clients not on the leaseholder's board at the end | %d of %d | 0 |\n", r.OffBoard, r.ClientsAtTheEnd)
	fmt.Fprintf(w, "| boards at the end (each client served alone one) | %d | 1 |\n", r.Boards)
	fmt.Fprintf(w, "| clients served alone at the end | %d | 0 |\n", r.AloneAtTheEnd)
	fmt.Fprintf(w, "| peers the leaseholder's board lists attached | %d of %d clients | one a client |\n", r.OnTheBoard, r.ClientsAtTheEnd)
	fmt.Fprintf(w, "| from the end of the harms to one board | %.1f s | — |\n", r.SettledSeconds)
	fmt.Fprintf(w, "| clients told of a layer edit within 20 s | %d | — |\n| notifications lost | %d | 0 |\n", r.Notified, r.NotificationsLost)
	for _, k := range slices.Sorted(maps.Keys(r.History)) {
		goal := "—"
		if strings.HasPrefix(k, "lost") {
			goal = "0"
		}
		fmt.Fprintf(w, "| history after a take-over: %s | %d | %s |\n", k, r.History[k], goal)
	}
	fmt.Fprintf(w, "| processes left after their clients closed stdin | %d | 0 |\n| lease left | %t | false |\n", r.LeftProcesses, r.LeftLease)
	var harms []string
	for _, k := range slices.Sorted(maps.Keys(r.Chaos)) {
		harms = append(harms, fmt.Sprintf("%s ×%d", k, r.Chaos[k]))
	}
	fmt.Fprintf(w, "\nchaos: %s\n", strings.Join(harms, ", "))
}
