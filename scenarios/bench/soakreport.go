package main

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
)

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
	Notified           int64             `json:"notified"`              // clients told of an edit within 5 s
	NotificationsLost  int64             `json:"notifications_lost"`    // clients not told, though alive and unharmed
	History            map[string]int    `json:"history"`               // what the checks of the history after take-overs found
	LongestCallSeconds float64           `json:"longest_call_seconds"`  // the longest answered call
	LeaseholderPeakMiB float64           `json:"leaseholder_peak_mib"`  // the highest VmHWM of a leaseholder, sampled every 250 ms
	LeftProcesses      int               `json:"leftover_processes"`
	LeftLease          bool              `json:"leftover_lease"`
	ClientsAtTheEnd    int               `json:"clients_at_the_end"`
	EndLease           string            `json:"end_lease"`  // what the lease held when the clients were checked
	EndServed          []string          `json:"end_served"` // where each was served, and as what
}

// printSoak writes the soak's figures as a Markdown table.
func printSoak(w *os.File, r *SoakReport) {
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
	fmt.Fprintf(w, "| peers the leaseholder's board lists attached | %d of %d clients | all |\n", r.OnTheBoard, r.ClientsAtTheEnd)
	fmt.Fprintf(w, "| from the end of the harms to one board | %.1f s | — |\n", r.SettledSeconds)
	fmt.Fprintf(w, "| clients told of a layer edit within 5 s | %d | — |\n| notifications lost | %d | 0 |\n", r.Notified, r.NotificationsLost)
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
