package kubeletoracle

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"sigs.k8s.io/yaml"

	"github.com/podrun/podrun/cri"
	"github.com/podrun/podrun/runner"
)

const (
	// pollInterval is how often /pods and the runtime are read while
	// waiting: short against a container's lifetime, cheap for the kubelet.
	pollInterval = 100 * time.Millisecond
	// appearTimeout bounds how long the kubelet may take to show a placed
	// manifest's pod in /pods (its file source reacts to inotify at once;
	// its periodic rescan is every 20 s).
	appearTimeout = 30 * time.Second
	// cleanupSlack is added to the pod's grace period for the kubelet to
	// kill it after its manifest is removed, and is the limit for the
	// kubelet to remove the pod's directory once its sandbox is gone.
	cleanupSlack = 30 * time.Second
	// removeRetryInterval spaces tries to remove a sandbox the kubelet is
	// still stopping.
	removeRetryInterval = 500 * time.Millisecond
	// finalStatusWait bounds how long after the runtime shows an ended
	// pod stopped the kubelet may take to write the pod's final status.
	finalStatusWait = 3 * time.Second
	// refusalInterval spaces the looks into the kubelet's log for its file
	// source's refusal of a manifest whose pod has not appeared.
	refusalInterval = time.Second
	// httpTimeout bounds one GET /pods.
	httpTimeout = 5 * time.Second
	// podUIDLabel is the label the kubelet puts on every sandbox and
	// container it creates.
	podUIDLabel = "io.kubernetes.pod.uid"
)

// ErrNotRun is returned when the kubelet never shows a placed manifest's
// pod: its file source refused the manifest. The error wrapping it ends
// with the reason the kubelet logged (Refusal reads it back).
var ErrNotRun = errors.New("the kubelet did not run the pod")

// Refusal is the kubelet's reason for refusing a manifest, from an error
// of Run that wraps ErrNotRun; "" for any other error.
func Refusal(err error) string {
	var r *refusedError
	if errors.As(err, &r) {
		return r.reason
	}
	return ""
}

// refusedError is ErrNotRun with the kubelet's reason.
type refusedError struct{ reason string }

func (e *refusedError) Error() string { return ErrNotRun.Error() + ": " + e.reason }
func (e *refusedError) Unwrap() error { return ErrNotRun }

// Kubelet is the testbed's oracle kubelet, as `hack/testbed.sh env`
// describes it after kubelet-up.
type Kubelet struct {
	Version      string
	StaticPodDir string // its staticPodPath
	PodsURL      string // GET: a v1.PodList with full status (read-only port)
	HealthzURL   string // its healthz: "ok" while it runs
	PodLogsDir   string // its podLogsDir
	RootDir      string // its --root-dir
	Endpoint     string // the CRI endpoint of its own containerd
	NodeName     string // its node name: a static pod is named <name>-<node>
	Log          string // its log file, for error messages

	// names serializes runs of pods with the same namespace and name:
	// the kubelet refuses a second static pod of the same full name.
	names sync.Map // "namespace/name" → *sync.Mutex
}

// envNames maps each setting to the variable hack/testbed.sh env prints.
var envNames = []struct {
	name  string
	field func(*Kubelet) *string
}{
	{"PODRUN_TESTBED_KUBELET_VERSION", func(k *Kubelet) *string { return &k.Version }},
	{"PODRUN_TESTBED_KUBELET_STATIC_POD_DIR", func(k *Kubelet) *string { return &k.StaticPodDir }},
	{"PODRUN_TESTBED_KUBELET_PODS_URL", func(k *Kubelet) *string { return &k.PodsURL }},
	{"PODRUN_TESTBED_KUBELET_HEALTHZ_URL", func(k *Kubelet) *string { return &k.HealthzURL }},
	{"PODRUN_TESTBED_KUBELET_POD_LOGS_DIR", func(k *Kubelet) *string { return &k.PodLogsDir }},
	{"PODRUN_TESTBED_KUBELET_ROOT_DIR", func(k *Kubelet) *string { return &k.RootDir }},
	{"PODRUN_TESTBED_KUBELET_ENDPOINT", func(k *Kubelet) *string { return &k.Endpoint }},
	{"PODRUN_TESTBED_KUBELET_NODE_NAME", func(k *Kubelet) *string { return &k.NodeName }},
	{"PODRUN_TESTBED_KUBELET_LOG", func(k *Kubelet) *string { return &k.Log }},
}

// FromEnv reads the kubelet's settings from the environment; an unset one
// is an error that says how to start the oracle.
func FromEnv() (*Kubelet, error) {
	k := &Kubelet{}
	var missing []string
	for _, e := range envNames {
		v := os.Getenv(e.name)
		if v == "" {
			missing = append(missing, e.name)
		}
		*e.field(k) = v
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("finding the oracle kubelet: %s not set: run `bash hack/testbed.sh kubelet-up`, then `set -a; eval \"$(bash hack/testbed.sh env)\"; set +a`",
			strings.Join(missing, ", "))
	}
	return k, nil
}

// RunOptions say when a run ends.
type RunOptions struct {
	// Wait is podrun's --wait for the same manifest: auto (the default),
	// complete or ready. none is not supported.
	Wait runner.WaitMode
	// Timeout, when > 0, ends the wait as podrun's --timeout does: the
	// result is the pod as last seen, with TimedOut set. A pod whose
	// status is still the one from before the kubelet's first sync of it
	// (firstSyncPending) is waited for a while longer, up to Timeout more:
	// the timeout stands for "the pod has been running a while", and a
	// kubelet busy with many pods at once (the conformance rows start a
	// dozen) can take longer than that to make a sandbox and start the
	// containers. Result.FirstSyncLate says by how much it did.
	Timeout time.Duration
}

// Result is the kubelet's outcome of a manifest.
type Result struct {
	// Pod is the kubelet's pod when the wait ended (named <name>-<node>,
	// with the kubelet's static pod UID); for a pod that ended, once
	// nothing of it ran any more.
	Pod *v1.Pod
	// Logs is each container's output of its latest run (ReadPodLogs),
	// read after the kubelet stopped the pod, so with what containers
	// printed while stopping.
	Logs     map[string]string
	TimedOut bool
	// FirstSyncLate is how long past RunOptions.Timeout the wait went on
	// for the kubelet's first sync of the pod; 0 when it did not.
	FirstSyncLate time.Duration
	// Elapsed runs from placing the manifest to the end of the wait.
	Elapsed time.Duration
}

// Run runs one Pod manifest (YAML or JSON, one document) on the kubelet
// and returns its outcome once the wait podrun would do is over, the pod
// has been stopped, and its sandboxes removed. The manifest is placed
// unchanged, under a file name of its own, so each run has a fresh static
// pod UID. Runs of differently named pods may go at once.
func (k *Kubelet) Run(ctx context.Context, manifest []byte, o RunOptions) (*Result, error) {
	var pod v1.Pod
	if err := yaml.Unmarshal(manifest, &pod); err != nil {
		// The kubelet decodes much as this does: place it all the same,
		// for the kubelet's own word on it.
		return nil, k.refuse(ctx, manifest, err)
	}
	if pod.Kind != "Pod" || pod.Name == "" {
		return nil, fmt.Errorf("decoding manifest: want one Pod with a name, got kind %q name %q", pod.Kind, pod.Name)
	}
	if o.Wait == "" {
		o.Wait = runner.WaitAuto
	}
	if o.Wait == runner.WaitNone {
		return nil, fmt.Errorf("running on the kubelet: --wait=none is not supported")
	}
	ns := pod.Namespace
	if ns == "" {
		ns = "default"
	}
	name := pod.Name + "-" + k.NodeName

	mu, _ := k.names.LoadOrStore(ns+"/"+name, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()

	if p, err := k.findPod(ctx, ns, name); err != nil {
		return nil, err
	} else if p != nil {
		return nil, fmt.Errorf("running on the kubelet: pod %s/%s (UID %s) is there already", ns, name, p.UID)
	}
	rt, err := cri.Dial(ctx, k.Endpoint)
	if err != nil {
		return nil, fmt.Errorf("connecting to the kubelet's runtime: %w", err)
	}
	defer rt.Close()
	logFrom := logSize(k.Log)
	file, err := k.place(pod.Name, manifest)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	res, waitErr := k.wait(ctx, rt, ns, name, o, start, func() string { return refusalIn(k.Log, logFrom, file) })
	if res != nil {
		res.Elapsed = time.Since(start)
	}

	// Whatever the wait's end, the pod goes, under a context of its own.
	grace := gracePeriod(&pod)
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace+2*cleanupSlack)
	defer cancel()
	if err := os.Remove(file); err != nil {
		return nil, errors.Join(waitErr, fmt.Errorf("removing the manifest: %w", err))
	}
	if res == nil || res.Pod == nil {
		return nil, waitErr
	}
	uid := string(res.Pod.UID)
	logDir := PodLogDir(k.PodLogsDir, ns, name, uid)
	if res.Logs, err = ReadPodLogs(logDir); err != nil {
		return nil, errors.Join(waitErr, err)
	}
	if err := k.remove(cctx, rt, uid, grace+cleanupSlack, logDir, res); err != nil {
		return nil, errors.Join(waitErr, err)
	}
	return res, waitErr
}

// refuse places a manifest Run cannot decode (decodeErr) and returns the
// kubelet's refusal of it, as Run would (ErrNotRun with the reason it
// logged), or an error when the kubelet says nothing of it in time.
func (k *Kubelet) refuse(ctx context.Context, manifest []byte, decodeErr error) error {
	logFrom := logSize(k.Log)
	file, err := k.place("undecodable", manifest)
	if err != nil {
		return err
	}
	defer os.Remove(file)
	for deadline := time.Now().Add(appearTimeout); time.Now().Before(deadline); {
		if why := refusalIn(k.Log, logFrom, file); why != "" {
			return &refusedError{reason: why}
		}
		if err := sleep(ctx, refusalInterval); err != nil {
			return err
		}
	}
	return fmt.Errorf("decoding manifest: %w; the kubelet logged no refusal of it in %s (see %s)", decodeErr, appearTimeout, k.Log)
}

// place writes manifest into the static pod dir as
// oracle-<name>-<random>.yaml, through a dot file the kubelet ignores
// and a rename, so it never reads half a file.
func (k *Kubelet) place(name string, manifest []byte) (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("placing the manifest: %w", err)
	}
	base := "oracle-" + name + "-" + hex.EncodeToString(b[:]) + ".yaml"
	tmp := filepath.Join(k.StaticPodDir, "."+base)
	if err := os.WriteFile(tmp, manifest, 0o600); err != nil {
		return "", fmt.Errorf("placing the manifest: %w", err)
	}
	file := filepath.Join(k.StaticPodDir, base)
	if err := os.Rename(tmp, file); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("placing the manifest: %w", err)
	}
	return file, nil
}

// wait polls /pods until the pod's end (podEnd), the timeout or ctx. A
// result comes back whenever the pod was seen. For a pod that ended, the
// status returned is the kubelet's final one: the kubelet stops an ended
// pod's sandbox and then writes its status once more
// (SyncTerminatingPod), so the wait goes on until the runtime shows the
// pod stopped and the status no longer says its sandbox is ready (or
// finalStatusWait after the stop).
//
// While the pod is not there, refused (every refusalInterval) looks for
// the file source's reason in the kubelet's log: the pod never comes then.
func (k *Kubelet) wait(ctx context.Context, rt *cri.Client, ns, name string, o RunOptions, start time.Time, refused func() string) (*Result, error) {
	res := &Result{}
	var refusalChecked time.Time
	var settleBy, stoppedAt time.Time // set once the pod ended, and once the runtime shows it stopped
	for {
		p, err := k.findPod(ctx, ns, name)
		if err != nil {
			return res, err
		}
		if p != nil {
			res.Pod = p
			e := podEnd(o.Wait, p)
			if e == endSettled && !terminal(p) {
				return res, nil
			}
			if e != endWaiting && settleBy.IsZero() {
				settleBy = time.Now().Add(gracePeriod(p) + cleanupSlack)
			}
			if e == endSettled && stoppedAt.IsZero() {
				stopped, _, err := podStopped(ctx, rt, string(p.UID))
				if err != nil {
					return res, err
				}
				if stopped {
					stoppedAt = time.Now()
				}
			}
			if !stoppedAt.IsZero() && (!sandboxReady(p) || time.Since(stoppedAt) > finalStatusWait) {
				return res, nil
			}
			if !settleBy.IsZero() && time.Now().After(settleBy) {
				return res, nil
			}
		}
		if res.Pod == nil && time.Since(refusalChecked) > refusalInterval {
			refusalChecked = time.Now()
			if why := refused(); why != "" {
				return nil, &refusedError{reason: why}
			}
		}
		switch {
		case res.Pod == nil && time.Since(start) > appearTimeout:
			return nil, fmt.Errorf("%w: pod %s/%s is not in %s %s after placing its manifest; see %s",
				ErrNotRun, ns, name, k.PodsURL, appearTimeout, k.Log)
		case settleBy.IsZero() && o.Timeout > 0 && time.Since(start) > o.Timeout:
			if late := time.Since(start) - o.Timeout; late < o.Timeout && (res.Pod == nil || firstSyncPending(res.Pod)) {
				res.FirstSyncLate = late
				break
			}
			res.TimedOut = true
			return res, nil
		}
		if err := sleep(ctx, pollInterval); err != nil {
			return res, fmt.Errorf("waiting for pod %s/%s on the kubelet: %w", ns, name, err)
		}
	}
}

func terminal(p *v1.Pod) bool {
	return p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed
}

// sandboxReady says whether the status's PodReadyToStartContainers
// condition is True.
func sandboxReady(p *v1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodReadyToStartContainers {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

// gracePeriod is the pod's termination grace period (30 s by default).
func gracePeriod(p *v1.Pod) time.Duration {
	if g := p.Spec.TerminationGracePeriodSeconds; g != nil {
		return time.Duration(*g) * time.Second
	}
	return 30 * time.Second
}

// findPod is the pod of that namespace and name in /pods, or nil.
func (k *Kubelet) findPod(ctx context.Context, ns, name string) (*v1.Pod, error) {
	pods, err := k.Pods(ctx)
	if err != nil {
		return nil, err
	}
	for i := range pods {
		if pods[i].Namespace == ns && pods[i].Name == name {
			return &pods[i], nil
		}
	}
	return nil, nil
}

// listed says whether /pods lists a pod with this UID.
func (k *Kubelet) listed(ctx context.Context, uid string) (bool, error) {
	pods, err := k.Pods(ctx)
	if err != nil {
		return false, err
	}
	for i := range pods {
		if string(pods[i].UID) == uid {
			return true, nil
		}
	}
	return false, nil
}

// Pods reads the kubelet's /pods.
func (k *Kubelet) Pods(ctx context.Context) ([]v1.Pod, error) {
	ctx, cancel := context.WithTimeout(ctx, httpTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, k.PodsURL, nil)
	if err != nil {
		return nil, fmt.Errorf("reading the kubelet's pods: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reading the kubelet's pods: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("reading the kubelet's pods: %s", resp.Status)
	}
	var list v1.PodList
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return nil, fmt.Errorf("reading the kubelet's pods: %w", err)
	}
	return list.Items, nil
}

// remove waits (up to killWithin) until the kubelet has stopped the pod
// whose manifest is gone (podStopped), reads its logs once more into res,
// removes its sandboxes and their containers through CRI as the kubelet's
// container GC would a minute later, then waits until the kubelet's
// housekeeping has removed the pod's directory (its volumes unmounted).
func (k *Kubelet) remove(ctx context.Context, rt *cri.Client, uid string, killWithin time.Duration, logDir string, res *Result) error {
	var sandboxes []*runtimeapi.PodSandbox
	for deadline := time.Now().Add(killWithin); ; {
		stopped, sbs, err := podStopped(ctx, rt, uid)
		if err != nil {
			return fmt.Errorf("removing pod %s from the kubelet: %w", uid, err)
		}
		if stopped {
			sandboxes = sbs
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("removing pod %s from the kubelet: still running %s after its manifest was removed", uid, killWithin)
		}
		if err := sleep(ctx, pollInterval); err != nil {
			return fmt.Errorf("removing pod %s from the kubelet: %w", uid, err)
		}
	}
	final, err := ReadPodLogs(logDir)
	if err != nil {
		return err
	}
	maps.Copy(res.Logs, final)
	// The sandbox shows not ready while the kubelet's own StopPodSandbox
	// still tears down its network; a removal then fails on the half-gone
	// network namespace, and succeeds once that stop has finished.
	for _, sb := range sandboxes {
		for deadline := time.Now().Add(cleanupSlack); ; {
			err := rt.RemovePodSandbox(ctx, sb.Id)
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("removing pod %s from the kubelet: %w", uid, err)
			}
			if err := sleep(ctx, removeRetryInterval); err != nil {
				return fmt.Errorf("removing pod %s from the kubelet: %w", uid, err)
			}
		}
	}
	podDir := filepath.Join(k.RootDir, "pods", uid)
	for deadline := time.Now().Add(cleanupSlack); ; {
		_, err := os.Stat(podDir)
		listed, lerr := k.listed(ctx, uid)
		if lerr != nil {
			return fmt.Errorf("removing pod %s from the kubelet: %w", uid, lerr)
		}
		// Gone from its /pods too: a pod of the same name may come next
		// (a rejected pod never had a dir, and stays listed a moment).
		if os.IsNotExist(err) && !listed {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("removing pod %s from the kubelet: %s or its /pods entry still there %s after its sandbox; see %s", uid, podDir, cleanupSlack, k.Log)
		}
		if err := sleep(ctx, pollInterval); err != nil {
			return fmt.Errorf("removing pod %s from the kubelet: %w", uid, err)
		}
	}
}

// podStopped lists the pod's sandboxes and containers on the kubelet's
// runtime (by the kubelet's pod UID label) and says whether the kubelet
// has stopped the pod.
func podStopped(ctx context.Context, rt *cri.Client, uid string) (bool, []*runtimeapi.PodSandbox, error) {
	sel := map[string]string{podUIDLabel: uid}
	sandboxes, err := rt.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: sel})
	if err != nil {
		return false, nil, err
	}
	containers, err := rt.ListContainers(ctx, &runtimeapi.ContainerFilter{LabelSelector: sel})
	if err != nil {
		return false, nil, err
	}
	return stopped(sandboxes, containers), sandboxes, nil
}

// stopped says whether the kubelet has stopped a pod: no sandbox ready,
// no container created or running.
func stopped(sandboxes []*runtimeapi.PodSandbox, containers []*runtimeapi.Container) bool {
	for _, sb := range sandboxes {
		if sb.State == runtimeapi.PodSandboxState_SANDBOX_READY {
			return false
		}
	}
	for _, c := range containers {
		if c.State == runtimeapi.ContainerState_CONTAINER_RUNNING || c.State == runtimeapi.ContainerState_CONTAINER_CREATED {
			return false
		}
	}
	return true
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
