package kubeletoracle

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// stderrMark starts each stderr line of an Output, so that a line moved
// from one stream to the other is a difference.
const stderrMark = "(stderr) "

// PodLogDir is where a kubelet (and podrun, with --pod-logs-dir) keeps a
// pod's container logs: <logs root>/<namespace>_<name>_<uid>.
func PodLogDir(logsRoot, namespace, name, uid string) string {
	return filepath.Join(logsRoot, namespace+"_"+name+"_"+uid)
}

// ReadPodLogs reads, for each container directory of a pod log dir, the
// output of the container's latest run (<container>/<restartCount>.log with
// the highest count: the one a kubelet keeps for certain, its container GC
// removes older runs' logs). A missing dir gives an empty map.
func ReadPodLogs(dir string) (map[string]string, error) {
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading pod logs: %w", err)
	}
	out := map[string]string{}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		file, ok, err := latestRunLog(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("reading container log: %w", err)
		}
		out[e.Name()] = DecodeCRILog(data)
	}
	return out, nil
}

// latestRunLog is the N.log with the highest N in a container's log dir.
func latestRunLog(dir string) (string, bool, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", false, fmt.Errorf("reading container log dir: %w", err)
	}
	best := -1
	for _, e := range entries {
		n, err := strconv.Atoi(strings.TrimSuffix(e.Name(), ".log"))
		if err != nil || !strings.HasSuffix(e.Name(), ".log") || e.IsDir() {
			continue
		}
		best = max(best, n)
	}
	if best < 0 {
		return "", false, nil
	}
	return filepath.Join(dir, strconv.Itoa(best)+".log"), true, nil
}

// DecodeCRILog turns a CRI log file ("<time> <stream> <P|F>[:...] <text>"
// per line, P for a partial line continued by the next of its stream) into
// the output as the container wrote it, one line per full line: first
// every stdout line, then every stderr line, marked with stderrMark. The
// streams are kept apart because the runtime reads them from two pipes,
// so how their lines interleave in the file is a race, not behaviour. A
// line that is not in CRI format counts as stdout.
func DecodeCRILog(data []byte) string {
	var out, errs strings.Builder
	partial := map[string]string{}
	for line := range bytes.Lines(data) {
		line = bytes.TrimSuffix(line, []byte("\n"))
		f := strings.SplitN(string(line), " ", 4)
		if len(f) < 3 || (f[1] != "stdout" && f[1] != "stderr") {
			out.Write(line)
			out.WriteByte('\n')
			continue
		}
		stream, tag, text := f[1], f[2], ""
		if len(f) == 4 {
			text = f[3]
		}
		tag, _, _ = strings.Cut(tag, ":")
		if tag == "P" {
			partial[stream] += text
			continue
		}
		text = partial[stream] + text
		delete(partial, stream)
		if stream == "stderr" {
			errs.WriteString(stderrMark + text + "\n")
		} else {
			out.WriteString(text + "\n")
		}
	}
	if p, ok := partial["stdout"]; ok {
		out.WriteString(p + "\n")
	}
	if p, ok := partial["stderr"]; ok {
		errs.WriteString(stderrMark + p + "\n")
	}
	return out.String() + errs.String()
}
