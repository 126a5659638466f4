package runner

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Lost container output. The runtime writes each container's output to its
// CRI log file in the pod's log dir, and podrun streams it from there. When
// a write fails (no space left on the log dir's filesystem) the runtime
// drops that output and goes on: the container still succeeds, and the
// stream just ends early. podrun looks for that once the pod's containers
// are stopped and their logs read to the end, from what the failure leaves
// on disk, whatever reads the logs: a log file that ends mid-line (the
// runtime writes whole lines, each in one write; one cut short is a write
// that failed) or a log filesystem with no space left.

// midLineSettle is how long a log file that ends mid-line is given to be
// completed (a write the runtime is making right then) before its end
// counts as lost.
const midLineSettle = 200 * time.Millisecond

// logsLost reports lost output of the pod's containers: an error naming
// the pod's log dir and what shows the loss, nil when nothing shows one.
func (p *podRun) logsLost() error {
	return logsLost(p.logDir)
}

func logsLost(logDir string) error {
	var cut []string
	walkErr := filepath.WalkDir(logDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() && strings.HasSuffix(path, ".log") && endsMidLine(path) {
			rel, _ := filepath.Rel(logDir, path)
			cut = append(cut, rel)
		}
		return nil
	})
	if errors.Is(walkErr, fs.ErrNotExist) {
		return nil // no container ever started
	}
	var st unix.Statfs_t
	full := unix.Statfs(logDir, &st) == nil && st.Bfree == 0
	var why []string
	for _, f := range cut {
		why = append(why, f+" ends mid-line")
	}
	if full {
		why = append(why, "its filesystem has no space left")
	}
	if len(why) == 0 {
		return nil
	}
	return fmt.Errorf("container output lost: the runtime could not write all of it to the log dir %s (%s)", logDir, strings.Join(why, "; "))
}

// endsMidLine reports whether a non-empty log file's last byte is not a
// newline, and stays so for midLineSettle.
func endsMidLine(path string) bool {
	deadline := time.Now().Add(midLineSettle)
	for {
		if !lastByteNotNewline(path) {
			return false
		}
		if time.Now().After(deadline) {
			return true
		}
		time.Sleep(midLineSettle / 4)
	}
}

func lastByteNotNewline(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var b [1]byte
	if _, err := f.Seek(-1, io.SeekEnd); err != nil {
		return false // empty
	}
	if _, err := io.ReadFull(f, b[:]); err != nil {
		return false
	}
	return b[0] != '\n'
}
