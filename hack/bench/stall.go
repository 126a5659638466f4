package main

// The machine's own stalls, told apart from podrun's cost: a round in
// which the kernel reports that every task waited on IO (PSI's "full"
// line of /proc/pressure/io) measured the disk, not the runtime or podrun.
// The pods table says so under a row whose rounds stalled.

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// pressureFull is the "full" total of a /proc/pressure file's content:
// how long every non-idle task was stalled, since boot. ok is false when
// the content has no such line (a kernel without PSI, or PSI off).
func pressureFull(content string) (total time.Duration, ok bool) {
	for _, line := range strings.Split(content, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != "full" {
			continue
		}
		for _, kv := range f[1:] {
			if v, found := strings.CutPrefix(kv, "total="); found {
				us, err := strconv.ParseInt(v, 10, 64)
				if err != nil || us < 0 {
					return 0, false
				}
				return time.Duration(us) * time.Microsecond, true
			}
		}
	}
	return 0, false
}

// ioStalled reads the IO full-stall total now; -1 when the kernel does
// not say.
func ioStalled() time.Duration {
	if d, ok := pressureFull(readFile("/proc/pressure/io")); ok {
		return d
	}
	return -1
}

// stallThreshold is the IO full-stall time within one run above which
// the pods table notes the row: well above what a quiet machine shows
// in a 100-pod run (a few ms), well below the stalls seen (seconds).
const stallThreshold = 500 * time.Millisecond

// stallNote says which runs of a row stalled on IO, or "" when none did
// (or the kernel does not say). side names the runs ("podrun", "bare").
func stallNote(side string, s []sample) string {
	var stalled []string
	for i, x := range s {
		if x.ioStall > stallThreshold {
			stalled = append(stalled, fmt.Sprintf("round %d: %.1f s of its %.1f s", i+1, x.ioStall.Seconds(), x.wall.Seconds()))
		}
	}
	if len(stalled) == 0 {
		return ""
	}
	return fmt.Sprintf("%s's runs with every task stalled on IO (/proc/pressure/io full): %s", side, strings.Join(stalled, ", "))
}
