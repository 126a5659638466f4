// Package runner is podrun's pipeline, the kubelet's pod workers and
// kuberuntime (pkg/kubelet/kuberuntime: computePodActions, SyncPod,
// killPod) for the pods of one run: GatherFacts learns the node and the
// runtime once; Run admits every pod, checks its volumes, starts pulling
// every image the pods will need, reclaims what dead podruns left, and for each pod makes its data dir, cgroup and volumes,
// then loops observe → plan → act until the wait condition holds or the pod
// fails, and finally tears everything down.
//
// Run order, and the file (or package) of each stage:
//
//	facts.go       GatherFacts: node, readiness, CNI check, cgroup driver, handlers (one CRI Status)
//	cgroupdriver.go decideCgroupDriver: the cgroup driver and where it came from; cgroupDriverHint, withCgroupDriverHint
//	runner.go      Run: the run's order below, one goroutine per pod (runPod)
//	admission      package runner/admission: whether the node takes each pod
//	volumes.go     checkVolumes, then setUpVolumes and containerMounts (package volumes)
//	runtimeclass.go runtimeHandlers: each pod's RuntimeClass handler, checked against the runtime's (RunPodSandbox's runtime_handler)
//	userns.go      checkUserns, allocateUserns: user namespaces for hostUsers false (of the pod's handler)
//	prefetch.go    planPullsAhead, prefetcher: every image of the run pulled from its start, reported at each container's turn
//	reclaim.go     reclaim: what dead podruns left; checkNotRunning
//	replace.go     --replace: decideReplace, replace: a detached pod of the same name stopped as down stops it (downPods)
//	datadirs.go    makePodDataDirs: the pod's data dir with its owner record (records.go)
//	cgroups        package runner/cgroups: the pod cgroup under its QoS cgroup
//	sync.go        syncLoop and act: the kubelet's SyncPod, in its numbered steps (each step's effect in its operation's file)
//	observe.go     observer: the runtime's view of the run (events, else polling)
//	runtimestatus.go runtimeStatus: what the runtime says of a pod's sandboxes and containers
//	podstatus.go   podStatusFor: the v1.PodStatus the kubelet would report
//	plan.go        computePodActions: what to create, start and kill next
//	sandbox.go     createSandbox (RunPodSandbox) and sandboxConfig, the CRI PodSandboxConfig it creates the pod's sandbox with
//	dns.go         dnsConfigFor: the sandbox's resolv.conf
//	hostname.go    podHostnames: hostname, domain and the sandbox's nodename
//	image.go       pullDecision, ensureImage: whether and how to pull (credentials: package runner/credentials)
//	container.go   startContainer (restart back-off, CreateContainer, StartContainer) and containerConfig, the CRI ContainerConfig it starts a container with
//	env.go         containerEnv: a container's environment (envFrom, env, valueFrom)
//	envfile.go     fileKeyRef values
//	security.go    containerSecurityContext, verifyRunAsNonRoot: uid, caps, seccomp, ...
//	oomscore.go    oomScoreAdj: a container's oom_score_adj by QoS class
//	etchosts.go    hostsFileContent: the kubelet-managed /etc/hosts
//	termination.go withTerminationMessage: the termination message (file, or FallbackToLogsOnError's logTail)
//	probe.go       probeWorker: when to probe and what result to publish
//	prober.go      podProber: runs the probe workers (exec, HTTP, TCP, gRPC)
//	hooks.go       postStart, runPreStop, runHandler: the lifecycle hooks
//	handlers.go    what probes and hooks share: ExecSync, the kubelet's HTTP GET
//	logs.go        logSet, logSink: a run's live output, each container's log followed into the run's buffered log sink
//	logfollow.go   tailer: a container instance's log read as the runtime writes it, into the sink
//	crilog.go      the CRI log decoder: readLog (cri-client's ReadLogs), logTail; criStream, which decodes as the log grows
//	loglost.go     logsLost: output the runtime could not write to the log dir
//	logtail.go     lastLogLines: the end of each container's log, kept in PodResult.Logs for the JUnit report (package runner/report/junit)
//	wait.go        waitOutcome: whether the wait condition holds; endOfPod: whether a plan ends the pod, and a kill comes first
//	deadline.go    ActiveDeadline, PastActiveDeadline: spec.activeDeadlineSeconds (the kubelet's active deadline handler)
//	copyout.go     --copy-out: a container's volume path copied to a host dir when it ends for good, else at teardown (package runner/artifacts)
//	jobcontroller.go decideJob: the Job controller's syncJob and manageJob as a pure function (backoffLimit, back-off, deadline, podFailurePolicy, completions, indexes)
//	job.go         runJob: a Job's run, decideJob carried out with the run's pod runs (docs/workloads.md)
//	teardown.go    teardown: the pod stopped (killPod), its sandboxes removed, unmount, remove dirs and cgroup
//	stop.go        how a pod stops, for the run (killPod, killContainer), down (stopForDown) and reclaim (removeSandboxAndPodDirs): grace periods, terminationOrdering, the sandboxes stopped and removed
//	exitcode.go    exitCode: podrun's exit status from the outcomes
//	dryrun.go      DryRun: the run up to the runtime, its configs built and not sent (podrun validate); DryRunFacts asks a runtime that answers for the cgroup driver alone
//	down.go        Down, downPods: `podrun down`, the pods chosen and stopped (stop.go)
//	podargs.go     the pods a POD argument names among podrun's sandboxes (podref.Named over sandboxRef): findPod for logs and exec; List for completion
//	podrecord.go   the status record as a run keeps it (nextStatusRecord), for `podrun ps`; markDeleting
//	listpods.go    PodLister: `podrun ps`'s pods, their status by podStatusFor (columns: package runner/report/podlist)
//	handover.go    Handover, decideHandover: `podrun handover`, pods adopted by or replaced with a kubelet's
//	records.go     the on-node record format and its compatibility rules: every label and annotation podrun puts on sandboxes, containers and listed pods, and the data dir's owner record, manifest and status record, with the code that writes and reads them
//	owner.go       Owner: the podrun process that runs a pod, and whether it is alive
//	runtime.go     Runtime: every CRI call the runner makes
//	testpause.go   test-only pause points at the stages of a run (e2e/faults_test.go)
//
// Decisions are pure functions over explicit inputs, tested with tables;
// effects are thin and sit next to the decision they carry out: an
// operation and its decision share a file (createSandbox and sandboxConfig,
// startContainer and containerConfig, ensureImage and pullDecision), and
// one file stops a pod for every path that does (stop.go). The leaf
// stages the kubelet keeps outside kuberuntime are packages of their own
// with narrow inputs: admission (pkg/kubelet/lifecycle), cgroups
// (pkg/kubelet/cm), credentials (pkg/credentialprovider); the pod-level
// resource arithmetic they share, with sources and volumes, is package
// sources/podresources. The
// printers and reports (ps's columns, the live status, the JUnit report)
// are packages under runner/report that read what runner hands out
// (Result, Progress, podref.Listed); runner imports none of them
// (TestRunnerImportsNoPrinter). docs/architecture.md draws the data flow.
package runner
