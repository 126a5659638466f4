package runner

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The kubelet's termination message limits (pkg/kubelet/container/runtime.go).
const (
	maxTerminationMessageLength   = 1024 * 4 // read from the end of the file
	maxTerminationMessageLogLines = 80       // FallbackToLogsOnError: last lines of the log
	maxTerminationMessageLogLen   = 1024 * 2 // ... cut to their last bytes
)

// reasonContainerCannotRun is the runtime reason of a container that never
// ran; it has no logs to fall back to.
const reasonContainerCannotRun = "ContainerCannotRun"

// terminationMount creates the host side of a container instance's
// termination message file, <pod dir>/containers/<name>/<8 hex digits>
// (dir 0750, file 0666 whatever the umask), and returns its mount at
// terminationMessagePath (kubelet GenerateRunContainerOptions and
// kuberuntime makeMounts). Like the kubelet, a container without a path
// gets none.
func (p *podRun) terminationMount(c *v1.Container) (*runtimeapi.Mount, error) {
	if c.TerminationMessagePath == "" {
		return nil, nil
	}
	dir := filepath.Join(p.dataDir, "containers", c.Name)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, err
	}
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, fmt.Sprintf("%08x", binary.BigEndian.Uint32(b[:])))
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("creating the termination-log file: %w", err)
	}
	f.Close()
	if err := os.Chmod(path, 0o666); err != nil {
		return nil, err
	}
	return terminationMessageMount(c, path), nil
}

// terminationMessageMount mounts the host file path at the container's
// terminationMessagePath.
func terminationMessageMount(c *v1.Container, path string) *runtimeapi.Mount {
	return &runtimeapi.Mount{ContainerPath: c.TerminationMessagePath, HostPath: path, SelinuxRelabel: true}
}

// withTerminationMessage is the message of an exited container: the
// runtime's message, then ": " and the termination message when there is
// one (kuberuntime getContainerStatuses). The termination message is read
// from the host side of the mount at the path the container was created
// with (getTerminationMessage); with FallbackToLogsOnError, a non-zero exit
// and no message it is the end of the container's log
// (readLastStringFromContainerLogs).
func withTerminationMessage(st *runtimeapi.ContainerStatus) string {
	msg := st.Message
	path := st.Annotations[annotationTerminationMessagePath]
	fallback := v1.TerminationMessagePolicy(st.Annotations[annotationTerminationMessagePolicy]) == v1.TerminationMessageFallbackToLogsOnError &&
		st.ExitCode != 0 && st.Reason != reasonContainerCannotRun
	tmsg, checkLogs := "", fallback
	if path != "" {
		for _, m := range st.Mounts {
			if m.ContainerPath != path {
				continue
			}
			data, _, err := readTail(m.HostPath, maxTerminationMessageLength)
			switch {
			case errors.Is(err, os.ErrNotExist):
			case err != nil:
				tmsg, checkLogs = fmt.Sprintf("Error on reading termination log %s: %v", m.HostPath, err), false
			default:
				tmsg, checkLogs = string(data), fallback && len(data) == 0
			}
			break
		}
	}
	if checkLogs && st.LogPath != "" {
		text, err := logTail(st.LogPath, maxTerminationMessageLogLines, maxTerminationMessageLogLen)
		if err != nil {
			text = fmt.Sprintf("Error on reading termination message from logs: %v", err)
		}
		tmsg = text
	}
	if tmsg != "" {
		if msg != "" {
			msg += ": "
		}
		msg += tmsg
	}
	return msg
}

// readTail reads at most max bytes from the end of a file (the kubelet's
// tail.ReadAtMost) and says whether it left the start out.
func readTail(path string, max int64) ([]byte, bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	cut := fi.Size() > max
	if cut {
		if _, err := f.Seek(-max, io.SeekEnd); err != nil {
			return nil, false, err
		}
	}
	data, err := io.ReadAll(io.LimitReader(f, max))
	return data, cut, err
}
