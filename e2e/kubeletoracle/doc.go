// Package kubeletoracle runs Pod manifests on a real kubelet and compares
// its outcome with podrun's. The kubelet is the testbed's oracle
// (`bash hack/testbed.sh kubelet-up`): a standalone kubelet on a
// containerd of its own, with a static pod directory and the read-only
// port's GET /pods. When podrun and the kubelet disagree, the kubelet is
// right unless docs/ says why podrun differs on purpose.
//
// Run places one manifest in the static pod directory under a file name of
// its own (the kubelet's static pod UID hashes the file's path, so every
// run gets a fresh UID and never meets the exited containers of an earlier
// run), polls /pods until the pod reaches the end podrun's --wait would
// wait for (for a pod that ended: the final status the kubelet writes
// once it has stopped the sandbox, as podrun re-reads an ended pod after
// its teardown), reads the containers' logs from the kubelet's pod logs
// directory, then removes the manifest, waits until the kubelet has killed
// the pod and removes its sandboxes through CRI (what the kubelet's
// container GC does a minute later).
//
// Compare is pure: podrun's final v1.Pod (`podrun -o json`) and its
// output against the kubelet's, per container and per pod, with addresses,
// UIDs, names, container IDs and times normalized. Its Report is MATCH,
// or DIFF with each field path and both values.
package kubeletoracle
