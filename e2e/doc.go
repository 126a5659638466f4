// Package e2e holds podrun's end-to-end tier: the podrun binary against the
// real testbed (hack/testbed.sh: containerd with its CRI plugin, runc, a CNI
// bridge, two local registries), one file per capability. The tests carry
// the build tag e2e, so `go test ./...` stays the fast unit tier. Run them
// with `make e2e`, or one at a time:
//
//	make build && set -a && eval "$(bash hack/testbed.sh env)" && set +a &&
//	go test -count=1 -tags e2e -run 'TestE2EExitCode' -v ./e2e/
//
// harness_test.go is the shared part: TestMain (it builds podrun, or tests
// the binary $PODRUN_E2E_BINARY names, and fails, never skips, without a
// testbed), the per-test environment with its cleanliness check, running
// podrun, and reading its output; runtime_test.go knows the runtime (the
// same tests run on CRI-O beside the testbed: hack/crio.sh, make e2e-crio,
// docs/cri-o.md) and what this host lets it do. The manifests are files under
// testdata/e2e/<topic>/; the corpus rows are read in place from
// ../shared/corpus beside the clone.
package e2e
