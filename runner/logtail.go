package runner

import "fmt"

// maxLogTailLen bounds the text lastLogLines returns: a container whose
// last lines are huge still gives a report of a sane size.
const maxLogTailLen = 64 << 10

// lastLogLines is the text of the last n lines of the CRI log file at path
// (stdout and stderr together, partial lines joined, without the
// timestamps), through the run's one CRI log decoder (logTail).
func lastLogLines(path string, n int) (string, error) {
	return logTail(path, int64(n), maxLogTailLen)
}

// readLogTails reads the last Options.LogTailLines lines of the newest
// instance of each of the pod's containers that has a log, by container
// name; nil when the run keeps none. A log that cannot be read says why.
func (p *podRun) readLogTails() map[string]string {
	n := p.r.opts.LogTailLines
	if n <= 0 {
		return nil
	}
	out := map[string]string{}
	for _, c := range PodContainers(p.pod) {
		cs := p.observed.latest(c.Name)
		if cs == nil || cs.LogPath == "" || cs.State == stateCreated {
			continue
		}
		text, err := lastLogLines(cs.LogPath, n)
		if err != nil {
			text = fmt.Sprintf("(the log could not be read: %v)\n", err)
		}
		out[c.Name] = text
	}
	return out
}
