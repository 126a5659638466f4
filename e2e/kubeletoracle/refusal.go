package kubeletoracle

import (
	"bufio"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// The kubelet's file source logs a manifest it cannot use twice: at once,
// from the watch event ("Unable to process watch event" err="can't
// process config file \"PATH\": REASON"), and at each rescan ("Could not
// process manifest file" err="REASON" path="PATH"); pkg/kubelet/config/
// file.go and file_linux.go.
var logErr = regexp.MustCompile(`err=("(?:[^"\\]|\\.)*")`)

// logSize is the kubelet log's size now (0 when unreadable): where
// refusalIn starts to read for a manifest placed after it.
func logSize(log string) int64 {
	fi, err := os.Stat(log)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// refusalIn is the reason the kubelet's log gives, after offset from, for
// refusing the manifest file, or "".
func refusalIn(log string, from int64, file string) string {
	f, err := os.Open(log)
	if err != nil {
		return ""
	}
	defer f.Close()
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return ""
	}
	return refusalReason(f, file)
}

// refusalReason scans kubelet log lines for the file source's refusal of
// file.
func refusalReason(r io.Reader, file string) string {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	quoted := strconv.Quote(file)
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, "process") || !strings.Contains(line, file) {
			continue
		}
		m := logErr.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		msg, err := strconv.Unquote(m[1])
		if err != nil {
			continue
		}
		// The watch event's form names the file in the message.
		msg = strings.TrimPrefix(msg, "can't process config file "+quoted+": ")
		return msg
	}
	return ""
}
