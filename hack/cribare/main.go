// Command cribare runs pods on a CRI runtime with nothing but the CRI v1 API
// and gRPC: no podrun code. It is the testbed's smoke test and the baseline
// the podrun benchmark compares against.
//
// Per pod it does exactly: ImageStatus (PullImage only if absent),
// RunPodSandbox, CreateContainer, StartContainer, poll ContainerStatus every
// 10ms until the container exits, StopPodSandbox, RemovePodSandbox.
//
// With -http PORT it instead waits until the container answers HTTP GET on
// the pod IP (from the host), then stops the container (SIGTERM, which the
// testbed's nginx stand-in must honour promptly) before tearing down.
//
// With -ping it checks that the runtime is ready (RuntimeReady and
// NetworkReady); hack/testbed.sh up waits on it.
//
// With -stop-after D it lets the container run for D, then stops it the same
// way (idle stand-ins must exit 0 on SIGTERM at once).
//
// With -seq INIT,SIDECAR,MAIN it runs the bench's cold-start pod as the
// sequential floor (hack/bench's cold-start table): RunPodSandbox, then for
// each container PullImage, CreateContainer, StartContainer, in order,
// waiting for the init container's exit before the next and for the main
// container's, then prints the milliseconds from the start to that exit
// and tears the pod down. With -at-once as well, every PullImage is sent
// at the start, beside RunPodSandbox, and each container waits for its
// own image, in the same order: it then also prints the milliseconds until
// the last of the pulls ended (the runtime's download width: no client's
// main container can start before that). With -rmi IMAGES it removes
// those images.
//
// With -cleanup it stops and removes every pod sandbox the runtime knows
// (hack/testbed.sh down uses it so no container outlives the testbed).
//
// It prints nothing on success unless -v, and exits 1 on any error.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

var (
	endpoint  = flag.String("endpoint", defaultEndpoint(), "CRI endpoint (unix:///path); defaults to $CONTAINER_RUNTIME_ENDPOINT")
	image     = flag.String("image", "busybox", "image of the container")
	n         = flag.Int("n", 1, "pods to run at once")
	cmdFlag   = flag.String("cmd", "/bin/true", "container command, split on spaces; empty = the image's default")
	httpPort  = flag.Int("http", 0, "if >0: wait for HTTP 200 from podIP:PORT instead of waiting for exit (-cmd defaults to the image's)")
	timeout   = flag.Duration("timeout", 2*time.Minute, "overall timeout")
	verbose   = flag.Bool("v", false, "print per-pod IPs and timings")
	stopAfter = flag.Duration("stop-after", 0, "if >0: let the container run this long, then StopContainer and require a prompt exit 0 (-cmd defaults to the image's)")
	shScript  = flag.String("sh", "", "run this shell script (sh -c SCRIPT) instead of -cmd")
	auth      = flag.String("auth", "", "USER:PASSWORD sent with PullImage (as from an imagePullSecret)")
	showLogs  = flag.Bool("logs", false, "print each container's log (CRI format) after it exits")
	cleanup   = flag.Bool("cleanup", false, "stop and remove every pod sandbox on the runtime, then exit")
	notReady  = flag.Bool("notready", false, "with -cleanup: only sandboxes that are not ready (their processes are gone)")
	prefix    = flag.String("prefix", "", "with -cleanup: only sandboxes whose metadata name starts with this")
	ping      = flag.Bool("ping", false, "check that the runtime answers Version and Status with RuntimeReady and NetworkReady, then exit")
	seq       = flag.String("seq", "", "INIT,SIDECAR,MAIN images: one pod, each image pulled right before its container is created and started, in order (init runs true to its exit, sidecar /bin/idle is left running, main runs sleep 1 to its exit); prints the ms to the main container's exit")
	atOnce    = flag.Bool("at-once", false, "with -seq: send every PullImage at the start, beside RunPodSandbox; each container still waits for its own image; also prints the ms until the last pull ended")
	rmi       = flag.String("rmi", "", "comma-separated images to remove (RemoveImage; absent ones are no error), then exit")
	exitOf    = flag.String("exit-of", "", "POD/CONTAINER: wait for the container CONTAINER of the pod whose io.kubernetes.pod.name label is POD (polled every 10 ms), then print the Unix nanoseconds of its exit (the runtime's finishedAt) and its exit code")
)

func defaultEndpoint() string {
	if e := os.Getenv("CONTAINER_RUNTIME_ENDPOINT"); e != "" {
		return e
	}
	return "unix:///var/lib/podrun-testbed/run/containerd.sock"
}

func main() {
	flag.Parse()
	cmdSet := false
	flag.Visit(func(f *flag.Flag) {
		if f.Name == "cmd" {
			cmdSet = true
		}
	})
	var command []string
	if (*httpPort == 0 && *stopAfter == 0) || cmdSet {
		command = strings.Fields(*cmdFlag)
	}
	if *shScript != "" {
		command = []string{"/bin/sh", "-c", *shScript}
	}
	if err := run(command); err != nil {
		fmt.Fprintln(os.Stderr, "cribare:", err)
		os.Exit(1)
	}
}

func run(command []string) error {
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	conn, err := grpc.NewClient(*endpoint,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(16<<20)))
	if err != nil {
		return fmt.Errorf("connect %s: %w", *endpoint, err)
	}
	defer conn.Close()
	rt := runtimeapi.NewRuntimeServiceClient(conn)
	img := runtimeapi.NewImageServiceClient(conn)

	if *cleanup {
		return cleanAll(ctx, rt)
	}
	if *ping {
		return pingRuntime(ctx, rt)
	}
	if *rmi != "" {
		return removeImages(ctx, img, strings.Split(*rmi, ","))
	}
	if *seq != "" {
		return runSequence(ctx, rt, img, strings.Split(*seq, ","))
	}
	if *exitOf != "" {
		return watchExit(ctx, rt, *exitOf)
	}

	logRoot, err := os.MkdirTemp("", "cribare-logs-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(logRoot)

	start := time.Now()
	errs := make([]error, *n)
	var wg sync.WaitGroup
	for i := 0; i < *n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			t0 := time.Now()
			ip, err := runPod(ctx, rt, img, i, logRoot, command)
			if err != nil {
				errs[i] = fmt.Errorf("pod %d: %w", i, err)
				return
			}
			if *verbose {
				fmt.Printf("pod %d: ip=%s %v\n", i, ip, time.Since(t0).Round(time.Millisecond))
			}
		}(i)
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if *verbose {
		total := time.Since(start)
		fmt.Printf("%d pods in %v (%v per pod)\n", *n, total.Round(time.Millisecond), (total / time.Duration(*n)).Round(time.Millisecond))
	}
	return nil
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func runPod(ctx context.Context, rt runtimeapi.RuntimeServiceClient, img runtimeapi.ImageServiceClient, i int, logRoot string, command []string) (ip string, err error) {
	spec := &runtimeapi.ImageSpec{Image: *image}
	st, err := img.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: spec})
	if err != nil {
		return "", fmt.Errorf("ImageStatus: %w", err)
	}
	if st.Image == nil {
		req := &runtimeapi.PullImageRequest{Image: spec}
		if user, pass, ok := strings.Cut(*auth, ":"); ok {
			req.Auth = &runtimeapi.AuthConfig{Username: user, Password: pass}
		}
		if _, err := img.PullImage(ctx, req); err != nil {
			return "", fmt.Errorf("PullImage %s: %w", *image, err)
		}
	}

	uid := randHex(8)
	logDir := filepath.Join(logRoot, uid)
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return "", err
	}
	sbConfig := sandboxConfig(fmt.Sprintf("cribare-%d-%s", i, uid), uid, fmt.Sprintf("cribare-%d", i), logDir)
	nsOpts := sbConfig.Linux.SecurityContext.NamespaceOptions
	sb, err := rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: sbConfig})
	if err != nil {
		return "", fmt.Errorf("RunPodSandbox: %w", err)
	}
	podID := sb.PodSandboxId
	// Tear the sandbox down whatever happened, with a context of its own so
	// that a timeout above still cleans up.
	defer func() {
		cctx, ccancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer ccancel()
		if _, e := rt.StopPodSandbox(cctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: podID}); e != nil {
			err = errors.Join(err, fmt.Errorf("StopPodSandbox: %w", e))
			return
		}
		if _, e := rt.RemovePodSandbox(cctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: podID}); e != nil {
			err = errors.Join(err, fmt.Errorf("RemovePodSandbox: %w", e))
		}
	}()

	ctr, err := rt.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{
		PodSandboxId: podID,
		Config: &runtimeapi.ContainerConfig{
			Metadata: &runtimeapi.ContainerMetadata{Name: "c"},
			Image:    spec,
			Command:  command,
			LogPath:  "c.log",
			Linux: &runtimeapi.LinuxContainerConfig{
				SecurityContext: &runtimeapi.LinuxContainerSecurityContext{NamespaceOptions: nsOpts},
			},
		},
		SandboxConfig: sbConfig,
	})
	if err != nil {
		return "", fmt.Errorf("CreateContainer: %w", err)
	}
	if _, err := rt.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: ctr.ContainerId}); err != nil {
		return "", fmt.Errorf("StartContainer: %w", err)
	}

	if *verbose || *httpPort > 0 {
		ps, err := rt.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: podID})
		if err != nil {
			return "", fmt.Errorf("PodSandboxStatus: %w", err)
		}
		if net := ps.GetStatus().GetNetwork(); net != nil {
			ip = net.Ip
		}
	}

	if *httpPort > 0 {
		if ip == "" {
			return "", errors.New("pod has no IP")
		}
		if err := waitHTTP(ctx, fmt.Sprintf("http://%s:%d/", ip, *httpPort)); err != nil {
			return ip, err
		}
	}
	if *stopAfter > 0 {
		time.Sleep(*stopAfter)
	}
	if *httpPort > 0 || *stopAfter > 0 {
		// A graceful stop: the stand-in must exit on SIGTERM well before
		// the grace period, else StopContainer takes the whole timeout.
		t0 := time.Now()
		if _, err := rt.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: ctr.ContainerId, Timeout: 10}); err != nil {
			return ip, fmt.Errorf("StopContainer: %w", err)
		}
		if d := time.Since(t0); d > 5*time.Second {
			return ip, fmt.Errorf("StopContainer took %v: SIGTERM not honoured", d)
		}
	}

	// Poll for the exit, as a kubelet-like runner would.
	for {
		cs, err := rt.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: ctr.ContainerId})
		if err != nil {
			return ip, fmt.Errorf("ContainerStatus: %w", err)
		}
		if s := cs.Status; s.State == runtimeapi.ContainerState_CONTAINER_EXITED {
			if *showLogs {
				logs, _ := os.ReadFile(filepath.Join(logDir, "c.log"))
				fmt.Printf("--- pod %d log:\n%s", i, logs)
			}
			if s.ExitCode != 0 {
				logs, _ := os.ReadFile(filepath.Join(logDir, "c.log"))
				return ip, fmt.Errorf("container exited %d (%s %s); log:\n%s", s.ExitCode, s.Reason, s.Message, logs)
			}
			break
		}
		select {
		case <-ctx.Done():
			return ip, fmt.Errorf("waiting for exit: %w", ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
	return ip, nil
}

func waitHTTP(ctx context.Context, url string) error {
	client := &http.Client{Timeout: 2 * time.Second}
	var last error
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := client.Do(req)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				if *verbose {
					fmt.Printf("GET %s: %d %q\n", url, resp.StatusCode, strings.TrimSpace(string(body)))
				}
				return nil
			}
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("GET %s: %v (%w)", url, last, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func cleanAll(ctx context.Context, rt runtimeapi.RuntimeServiceClient) error {
	list, err := rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return fmt.Errorf("ListPodSandbox: %w", err)
	}
	var errs []error
	for _, sb := range list.Items {
		if *notReady && sb.State == runtimeapi.PodSandboxState_SANDBOX_READY ||
			!strings.HasPrefix(sb.GetMetadata().GetName(), *prefix) {
			continue
		}
		if _, err := rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb.Id}); err != nil {
			errs = append(errs, fmt.Errorf("StopPodSandbox %s: %w", sb.Id, err))
			continue
		}
		if _, err := rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb.Id}); err != nil {
			errs = append(errs, fmt.Errorf("RemovePodSandbox %s: %w", sb.Id, err))
		}
		if *verbose {
			fmt.Printf("removed pod %s (%s)\n", sb.Id, sb.GetMetadata().GetName())
		}
	}
	return errors.Join(errs...)
}

func pingRuntime(ctx context.Context, rt runtimeapi.RuntimeServiceClient) error {
	v, err := rt.Version(ctx, &runtimeapi.VersionRequest{})
	if err != nil {
		return fmt.Errorf("Version: %w", err)
	}
	st, err := rt.Status(ctx, &runtimeapi.StatusRequest{})
	if err != nil {
		return fmt.Errorf("Status: %w", err)
	}
	for _, c := range st.GetStatus().GetConditions() {
		if !c.Status {
			return fmt.Errorf("%s is false: %s %s", c.Type, c.Reason, c.Message)
		}
	}
	if *verbose {
		fmt.Printf("%s %s (CRI %s): ready\n", v.RuntimeName, v.RuntimeVersion, v.RuntimeApiVersion)
	}
	return nil
}

// removeImages removes each image from the runtime; one already absent is
// no error.
func removeImages(ctx context.Context, img runtimeapi.ImageServiceClient, refs []string) error {
	var errs []error
	for _, ref := range refs {
		spec := &runtimeapi.ImageSpec{Image: ref}
		st, err := img.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: spec})
		if err != nil {
			errs = append(errs, fmt.Errorf("ImageStatus %s: %w", ref, err))
			continue
		}
		if st.Image == nil {
			continue
		}
		if _, err := img.RemoveImage(ctx, &runtimeapi.RemoveImageRequest{Image: &runtimeapi.ImageSpec{Image: st.Image.Id}}); err != nil {
			errs = append(errs, fmt.Errorf("RemoveImage %s: %w", ref, err))
		}
	}
	return errors.Join(errs...)
}

// sandboxConfig is the config of every sandbox cribare makes: the pod's
// network and IPC namespaces, each container's own PID namespace.
func sandboxConfig(name, uid, hostname, logDir string) *runtimeapi.PodSandboxConfig {
	return &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: name, Uid: uid, Namespace: "cribare"},
		Hostname:     hostname,
		LogDirectory: logDir,
		Linux: &runtimeapi.LinuxPodSandboxConfig{
			// The kubelet asks for the runtime's default seccomp profile on
			// every sandbox (and so does podrun); so does the baseline, or the
			// comparison would not be of the same pod.
			SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
				NamespaceOptions: &runtimeapi.NamespaceOption{
					Network: runtimeapi.NamespaceMode_POD,
					Pid:     runtimeapi.NamespaceMode_CONTAINER,
					Ipc:     runtimeapi.NamespaceMode_POD,
				},
				Seccomp: &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault},
			},
		},
	}
}

// runSequence is -seq: the cold-start pod's CRI calls one after the other.
func runSequence(ctx context.Context, rt runtimeapi.RuntimeServiceClient, img runtimeapi.ImageServiceClient, images []string) (err error) {
	if len(images) != 3 {
		return fmt.Errorf("-seq wants INIT,SIDECAR,MAIN, not %q", *seq)
	}
	start := time.Now()
	var exited time.Time
	uid := randHex(8)
	// With -at-once, pulled[i] delivers image i's pull's outcome and the
	// time it ended.
	type pullResult struct {
		err error
		end time.Time
	}
	pulled := make([]chan pullResult, len(images))
	logDir, err := os.MkdirTemp("", "cribare-seq-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(logDir)
	sbConfig := sandboxConfig("cribare-seq-"+uid, uid, "cribare-seq", logDir)
	nsOpts := sbConfig.Linux.SecurityContext.NamespaceOptions
	pull := func(image string) error {
		_, err := img.PullImage(ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: image}, SandboxConfig: sbConfig})
		if err != nil {
			return fmt.Errorf("PullImage %s: %w", image, err)
		}
		return nil
	}
	if *atOnce {
		for i, image := range images {
			pulled[i] = make(chan pullResult, 1)
			go func() {
				err := pull(image)
				pulled[i] <- pullResult{err, time.Now()}
			}()
		}
	}
	var lastPull time.Time
	sb, err := rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: sbConfig})
	if err != nil {
		return fmt.Errorf("RunPodSandbox: %w", err)
	}
	defer func() {
		cctx, ccancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer ccancel()
		if _, e := rt.StopPodSandbox(cctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb.PodSandboxId}); e != nil {
			err = errors.Join(err, fmt.Errorf("StopPodSandbox: %w", e))
			return
		}
		if _, e := rt.RemovePodSandbox(cctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb.PodSandboxId}); e != nil {
			err = errors.Join(err, fmt.Errorf("RemovePodSandbox: %w", e))
		}
	}()
	steps := []struct {
		name    string
		command []string
		wait    bool
	}{
		{"init", []string{"true"}, true},
		{"sidecar", []string{"/bin/idle"}, false},
		{"main", []string{"sleep", "1"}, true},
	}
	for i, st := range steps {
		spec := &runtimeapi.ImageSpec{Image: images[i]}
		if *atOnce {
			r := <-pulled[i]
			if r.err != nil {
				return r.err
			}
			if r.end.After(lastPull) {
				lastPull = r.end
			}
		} else if err := pull(images[i]); err != nil {
			return err
		}
		ctr, err := rt.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{
			PodSandboxId: sb.PodSandboxId,
			Config: &runtimeapi.ContainerConfig{
				Metadata: &runtimeapi.ContainerMetadata{Name: st.name},
				Image:    spec,
				Command:  st.command,
				LogPath:  st.name + ".log",
				Linux: &runtimeapi.LinuxContainerConfig{
					SecurityContext: &runtimeapi.LinuxContainerSecurityContext{NamespaceOptions: nsOpts},
				},
			},
			SandboxConfig: sbConfig,
		})
		if err != nil {
			return fmt.Errorf("CreateContainer %s: %w", st.name, err)
		}
		if _, err := rt.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: ctr.ContainerId}); err != nil {
			return fmt.Errorf("StartContainer %s: %w", st.name, err)
		}
		for st.wait {
			cs, err := rt.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: ctr.ContainerId})
			if err != nil {
				return fmt.Errorf("ContainerStatus %s: %w", st.name, err)
			}
			if s := cs.Status; s.State == runtimeapi.ContainerState_CONTAINER_EXITED {
				if s.ExitCode != 0 {
					return fmt.Errorf("container %s exited %d (%s %s)", st.name, s.ExitCode, s.Reason, s.Message)
				}
				exited = time.Unix(0, s.FinishedAt)
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("waiting for %s's exit: %w", st.name, ctx.Err())
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	// The time to the main container's exit as the runtime recorded it,
	// as the bench reads every side's.
	if *atOnce {
		// Every image was needed before the main container started, so the
		// last pull ended before its exit.
		fmt.Println(exited.Sub(start).Milliseconds(), lastPull.Sub(start).Milliseconds())
		return nil
	}
	fmt.Println(exited.Sub(start).Milliseconds())
	return nil
}

// watchExit waits for the container named by podContainer (POD/CONTAINER)
// to appear and exit, and prints the runtime's finishedAt of it in Unix
// nanoseconds and its exit code. It polls every 10 ms so that it sees the
// container between its exit and its removal by whoever runs it (podrun
// removes its pods at once; a kubelet keeps them): one it found that
// disappears before it saw it exit is an error.
func watchExit(ctx context.Context, rt runtimeapi.RuntimeServiceClient, podContainer string) error {
	pod, name, ok := strings.Cut(podContainer, "/")
	if !ok || pod == "" || name == "" {
		return fmt.Errorf("-exit-of wants POD/CONTAINER, not %q", podContainer)
	}
	filter := &runtimeapi.ContainerFilter{LabelSelector: map[string]string{
		"io.kubernetes.pod.name":       pod,
		"io.kubernetes.container.name": name,
	}}
	tick := func() error {
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s to exit: %w", podContainer, ctx.Err())
		case <-time.After(10 * time.Millisecond):
			return nil
		}
	}
	var id string
	for id == "" {
		resp, err := rt.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: filter})
		if err != nil {
			return fmt.Errorf("ListContainers: %w", err)
		}
		if len(resp.Containers) > 0 {
			id = resp.Containers[0].Id
			break
		}
		if err := tick(); err != nil {
			return err
		}
	}
	for {
		cs, err := rt.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id})
		if err != nil {
			return fmt.Errorf("ContainerStatus of %s (%s), before it was seen to exit: %w", podContainer, id, err)
		}
		if s := cs.Status; s.State == runtimeapi.ContainerState_CONTAINER_EXITED {
			fmt.Println(s.FinishedAt, s.ExitCode)
			return nil
		}
		if err := tick(); err != nil {
			return err
		}
	}
}
