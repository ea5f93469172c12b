package runtimes

import (
	"fmt"
	"strings"
)

// CohortEnv is the variable a client sets to say which cohort it launched
// its servers in.
const CohortEnv = "MAJORDOMUS_MCP_CLIENT_COHORT_ID"

// ClientCohort is the cohort of the client that launched this server: the
// value of MAJORDOMUS_MCP_CLIENT_COHORT_ID when it set one, else its
// launching parent (pid and start time), else unknown — when the parent is
// already gone (reparented to init) or cannot be read.
func ClientCohort(env string, ppid int, startOf func(int) (uint64, error)) (cohort, source string, parentPID int, parentStart uint64) {
	if v := strings.TrimSpace(env); v != "" {
		return "env:" + v, CohortFromEnvironment, 0, 0
	}
	if ppid > 1 {
		if start, err := startOf(ppid); err == nil {
			return fmt.Sprintf("parent:%d@%d", ppid, start), CohortFromParent, ppid, start
		}
	}
	return "", CohortUnknown, 0, 0
}
