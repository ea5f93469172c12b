package runtimes

import (
	"errors"
	"testing"
)

func TestClientCohort(t *testing.T) {
	startOf := func(pid int) (uint64, error) {
		if pid == 404 {
			return 0, errors.New("gone")
		}
		return 7000, nil
	}
	tests := []struct {
		env         string
		ppid        int
		cohort, src string
		parent      int
	}{
		{"run-42", 300, "env:run-42", CohortFromEnvironment, 0},
		{"  ", 300, "parent:300@7000", CohortFromParent, 300},
		{"", 1, "", CohortUnknown, 0},   // reparented to init: the parent is gone
		{"", 404, "", CohortUnknown, 0}, // the parent left before it could be read
	}
	for _, tt := range tests {
		cohort, src, parent, start := ClientCohort(tt.env, tt.ppid, startOf)
		if cohort != tt.cohort || src != tt.src || parent != tt.parent || (parent != 0) != (start == 7000) {
			t.Errorf("ClientCohort(%q, %d) = %q %q %d %d", tt.env, tt.ppid, cohort, src, parent, start)
		}
	}
}
