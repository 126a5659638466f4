package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"
)

// podDir is the pod's data dir: <root>/pods/<uid>.
func podDir(root, uid string) string { return filepath.Join(root, "pods", uid) }

// defaultLogDir is where pod logs go without --pod-logs-dir.
func defaultLogDir(root string) string { return filepath.Join(root, "logs") }

// podLogDir is the pod's log directory, named as the kubelet names it.
func podLogDir(logsRoot, namespace, name, uid string) string {
	return filepath.Join(logsRoot, podLogDirName(namespace, name, uid))
}

// podLogDirName is the name of the pod's log directory: one file name
// holding the namespace, the name and the UID.
func podLogDirName(namespace, name, uid string) string { return namespace + "_" + name + "_" + uid }

// nameMax is the longest file name, in bytes, that Linux filesystems take
// (NAME_MAX: ext4, xfs, btrfs, tmpfs, overlayfs): the limit of each
// element of a path.
const nameMax = unix.NAME_MAX

// checkPathNames refuses, before anything is created, a pod whose log dir
// would need a file name longer than nameMax: the API server takes a
// 63-byte namespace with a 253-byte name, but the log dir
// <namespace>_<name>_<uid> is one file name, which the runtime then cannot
// create (a kubelet's pod fails at its sandbox; a podrun run failed there
// too, and with -q said only that teardown could not remove the dir). The
// other names podrun makes from a pod's names stay below the limit by
// validation: the data dir's (the UID), the container log dirs' and the
// volume dirs' are DNS labels, at most 63 bytes.
func checkPathNames(pods []*v1.Pod) error {
	var errs []error
	for _, pod := range pods {
		uid := string(pod.UID)
		if n := len(podLogDirName(pod.Namespace, pod.Name, uid)); n > nameMax {
			errs = append(errs, fmt.Errorf("pod %s/%s: metadata.name: the pod's log dir <namespace>_<name>_<uid> would be a file name of %d bytes, "+
				"longer than the %d bytes a file name may have (NAME_MAX), and could not be created: "+
				"metadata.namespace and metadata.name may have at most %d bytes together (they have %d)",
				pod.Namespace, pod.Name, n, nameMax, nameMax-len(podLogDirName("", "", uid)), len(pod.Namespace)+len(pod.Name)))
		}
	}
	return errors.Join(errs...)
}

// dataFile is a file a pod data dir is made with (records.go: the
// manifest and the first status record).
type dataFile struct {
	name string
	data []byte
}

// makePodDataDirs creates <root>/pods/<uid>/{volumes,plugins,containers}
// (0750, as the kubelet's makePodDataDirs) with the owner record and the
// given files written before the dir appears under its final name, so a
// dir without an owner (or without its manifest) never exists.
func makePodDataDirs(root, uid string, rec ownerRecord, files ...dataFile) (string, error) {
	pods := filepath.Join(root, "pods")
	if err := os.MkdirAll(pods, 0o750); err != nil {
		return "", fmt.Errorf("creating %s: %w", pods, err)
	}
	dir := podDir(root, uid)
	tmp, err := os.MkdirTemp(pods, ".new-"+uid+"-")
	if err != nil {
		return "", fmt.Errorf("creating pod data dir: %w", err)
	}
	fail := func(err error) (string, error) {
		os.RemoveAll(tmp)
		return "", err
	}
	if err := os.Chmod(tmp, 0o750); err != nil {
		return fail(err)
	}
	for _, sub := range []string{"volumes", "plugins", "containers"} {
		if err := os.Mkdir(filepath.Join(tmp, sub), 0o750); err != nil {
			return fail(fmt.Errorf("creating pod data dir: %w", err))
		}
	}
	b, _ := json.Marshal(rec)
	if err := os.WriteFile(filepath.Join(tmp, ownerFile), b, 0o640); err != nil {
		return fail(fmt.Errorf("writing pod owner record: %w", err))
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(tmp, f.name), f.data, 0o640); err != nil {
			return fail(fmt.Errorf("writing %s: %w", f.name, err))
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		if errors.Is(err, fs.ErrExist) {
			// Another run of the pod made it first: two runs that passed
			// checkNotRunning at once. The one that lost says what the
			// check would have said, and leaves the winner's dir alone.
			return fail(dirTaken(dir, rec))
		}
		return fail(fmt.Errorf("creating pod data dir %s: %w", dir, err))
	}
	return dir, nil
}

// dirTaken is the error of a run whose pod's data dir another run made
// first: the pod is already running, by the podrun its owner record names.
func dirTaken(dir string, rec ownerRecord) error {
	how := "by another podrun"
	if other, err := readOwnerRecord(dir); err == nil && other.PID > 0 {
		how = fmt.Sprintf("by podrun pid %d", other.PID)
	}
	return &alreadyRunningError{Namespace: rec.Namespace, Name: rec.Name, UID: filepath.Base(dir), How: how}
}
