package runner

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Owner identifies a podrun process: the one that runs a pod, which a
// later run reclaims the pod from once it is gone (unless it detached).
// The owner is recorded in the labels of the pod's sandboxes and
// containers and in the owner record of its data dir (records.go).
type Owner struct {
	RunID    string
	PID      int
	PIDStart uint64
	Detached bool
}

// newOwner returns the identity of this process for a new run.
func newOwner(detached bool) (Owner, error) {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return Owner{}, err
	}
	start, err := processStartTime(os.Getpid())
	if err != nil {
		return Owner{}, fmt.Errorf("reading this process's start time: %w", err)
	}
	return Owner{RunID: hex.EncodeToString(b[:]), PID: os.Getpid(), PIDStart: start, Detached: detached}, nil
}

// Alive reports whether the owning process still runs: the PID exists and
// started at the recorded time.
func (o Owner) Alive() bool {
	if o.PID <= 0 {
		return false
	}
	start, err := processStartTime(o.PID)
	if err != nil {
		return false
	}
	return o.PIDStart == 0 || start == o.PIDStart
}

// processStartTime reads field 22 (starttime) of /proc/<pid>/stat.
func processStartTime(pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStatStartTime(string(b))
}

// parseStatStartTime parses the starttime field of a /proc/<pid>/stat line.
// The command name (field 2) may contain spaces and parentheses, so fields
// are counted from the last ')'.
func parseStatStartTime(stat string) (uint64, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("malformed stat line")
	}
	fields := strings.Fields(stat[i+1:])
	// fields[0] is field 3 (state); starttime is field 22.
	const idx = 22 - 3
	if len(fields) <= idx {
		return 0, fmt.Errorf("malformed stat line: %d fields", len(fields)+2)
	}
	return strconv.ParseUint(fields[idx], 10, 64)
}
