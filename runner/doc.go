// Package runner is podrun's pipeline: for every pod of a run it creates the
// pod's data dir, runs the pod sandbox, pulls images, starts containers, and
// then loops observe → decide → act until the wait condition holds or the pod
// fails, and finally tears everything down.
//
// Each stage lives in the file named after it. Decisions are pure functions
// over explicit inputs, tested with tables:
//
//	admit.go      admitPod: whether the node takes a pod (the kubelet's reasons)
//	plan.go       computePodActions: what to create, start and kill next
//	podstatus.go  podStatusFor: the v1.PodStatus the kubelet would report
//	wait.go       waitOutcome: whether the wait condition holds
//	sandbox.go    sandboxConfig: the CRI PodSandboxConfig of a pod
//	container.go  containerConfig: the CRI ContainerConfig of a container
//	env.go        containerEnv: a container's environment (envFrom, env, valueFrom)
//	security.go   containerSecurityContext, verifyRunAsNonRoot: uid, caps, seccomp, ...
//	oomscore.go   oomScoreAdj: a container's oom_score_adj by QoS class
//	hostname.go   podHostnames: hostname, domain and the sandbox's nodename
//	etchosts.go   hostsFileContent: the kubelet-managed /etc/hosts
//	termination.go lastLogText: the FallbackToLogsOnError message from a CRI log
//	image.go      pullDecision: whether to pull an image
//	pullsecrets.go authsFor: the registry credentials to try for an image
//	exitcode.go   exitCode: podrun's exit status from the outcome
//	probe.go      probeWorker: when to probe and what result to publish
//	hooks.go      killGracePeriod: the grace period of a kill (preStop, postStart)
//	down.go       stopTurns: the order `podrun down` stops a pod's containers in
//
// Effects are thin and sit next to the decision they carry out
// (sync.go, teardown.go, datadirs.go, logs.go, reclaim.go, observe.go;
// node.go reads the node admission checks against; volumes.go sets up the
// pod's volumes with package volumes and mounts them into containers).
package runner
