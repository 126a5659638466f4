# podrun — run Kubernetes Pod manifests once on the node's CRI runtime.
# `make help` lists the targets.

SHELL := /bin/bash
GO ?= go
BIN := bin/podrun
TESTBED := hack/testbed.sh
E2E_TIMEOUT ?= 60m
# E2E_RUN picks the end-to-end tests by name (go test -run), e.g.
# make e2e E2E_RUN=TestE2EVolume
E2E_RUN ?= E2E
# The package of the end-to-end tests.
E2E_PKG ?= ./e2e/
# The e2e tests CI runs on Debian's containerd 1.6 as well (a second testbed
# instance, hack/testbed.sh --flavor debian): the capabilities whose CRI
# traffic differs between the two lines (events or polling, exec and its
# streaming server, log files, stop and teardown, mounts, cgroups, user
# namespaces, runtime handlers (1.6 reports none), the pod network).
# E2E16_RUN=E2E runs them all.
E2E16_RUN ?= TestE2E(Sync|Volume|Probe|Hook|Signal|Reclaim|Cgroup|ExitCode|Userns|RuntimeClass|Replace|CNI|PodIP|HostNetwork|Exec|Cp|Logs|Ps|Fault(Stages|ClosedStdout|SIGHUP|ConcurrentRuns))

.PHONY: help build release profile demo test packages unit e2e e2e-containerd16 e2e-guest guest-image e2e-crio bench testbed-up testbed-down kubelet-up kubelet-down kubelet-test conformance-kubelet vet clean fuzz fuzz-short

help: ## list the targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F ':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

# urfave_cli_no_docs leaves out the man/markdown generators podrun never uses
# (and their start-up cost); grpcnotrace leaves out grpc's request tracing
# (golang.org/x/net/trace and html/template, whose init runs on every
# start; podrun never enables it): 0.45 MB less binary. CGO_ENABLED=0: a static binary (pure Go
# resolver and user lookups), so no dynamic loader, libc mapping or cgo
# thread start: about 1 ms less CPU and 1.5 MiB less RSS per run.
# The version and commit are linked in (hack/release.sh ldflags: podrun
# version prints them).
GOFLAGS_BUILD := -tags urfave_cli_no_docs,grpcnotrace -ldflags '$(shell bash hack/release.sh ldflags)'

build: ## build bin/podrun
	CGO_ENABLED=0 $(GO) build $(GOFLAGS_BUILD) -o $(BIN) .

release: ## build dist/: static binaries for linux/amd64 and arm64, a Debian package of each (binary, unit file, completions, man page), SHA256SUMS; RELEASE_FLAGS=--check builds it all again from scratch and compares
	bash hack/release.sh build $(RELEASE_FLAGS)

profile: ## build bin/podrun-profile: PODRUN_CPUPROFILE=FILE / PODRUN_MEMPROFILE=FILE write pprof profiles of a run
	CGO_ENABLED=0 $(GO) build -tags urfave_cli_no_docs,grpcnotrace,profile -o bin/podrun-profile .

testbed-up: ## install and start the testbed (containerd, runc, CNI, registries, images)
	bash $(TESTBED) up

testbed-down: ## stop what the testbed started (both instances)
	bash $(TESTBED) down --flavor debian
	bash $(TESTBED) down

kubelet-up: testbed-up ## start the oracle: a real kubelet (built once per version) on a containerd of its own
	bash $(TESTBED) kubelet-up

kubelet-down: ## stop the oracle kubelet and restore what it changed on the host
	bash $(TESTBED) kubelet-down

kubelet-test: kubelet-up ## the oracle library (e2e/kubeletoracle) against the real kubelet
	set -a; eval "$$(bash $(TESTBED) env)"; set +a; \
	$(GO) test -count=1 -tags e2e -run 'E2E' ./e2e/kubeletoracle/

demo: build testbed-up ## install what is needed, then run a demo pod through podrun
	set -a; eval "$$(bash $(TESTBED) env)"; set +a; \
	./$(BIN) --root-dir /var/lib/podrun-demo -f testdata/demo.yaml

vet: ## go vet every package
	$(GO) vet ./...
	$(GO) vet -tags e2e ./...

# The unit tests use one of the testbed's Debian packages: xmllint checks
# JUnit reports against the schema.
packages: ## install the Debian packages the tests use (needs root unless all are there)
	bash $(TESTBED) packages

unit: packages ## unit tests: pure tables, the fake CRI server, the CLI
	$(GO) test -count=1 ./...

e2e: build testbed-up ## end-to-end tests of bin/podrun against the real testbed
	set -a; eval "$$(bash $(TESTBED) env)"; set +a; \
	$(GO) build -o bin/testlog ./hack/testlog && \
	PODRUN_E2E_BINARY=$(CURDIR)/$(BIN) \
	$(GO) test -count=1 -tags e2e -timeout $(E2E_TIMEOUT) -run '$(E2E_RUN)' -json $(E2E_PKG) 2>&1 | bin/testlog -log /tmp/podrun-e2e.log; \
	s=("$${PIPESTATUS[@]}"); [[ $${s[0]} == 0 && $${s[1]} == 0 ]]

e2e-containerd16: build testbed-up ## the e2e subset E2E16_RUN on Debian's containerd 1.6, a testbed instance beside the v2 one
	bash $(TESTBED) up --flavor debian
	set -a; eval "$$(bash $(TESTBED) env --flavor debian)"; set +a; \
	$(GO) build -o bin/testlog ./hack/testlog && \
	PODRUN_E2E_BINARY=$(CURDIR)/$(BIN) \
	$(GO) test -count=1 -tags e2e -timeout $(E2E_TIMEOUT) -run '$(E2E16_RUN)' -json $(E2E_PKG) 2>&1 | bin/testlog -log /tmp/podrun-e2e16.log; \
	s=("$${PIPESTATUS[@]}"); [[ $${s[0]} == 0 && $${s[1]} == 0 ]]

# The nodes users have (hack/guest.sh): a Debian 12 guest with systemd and
# cgroup v2, under qemu's software emulation, where the node-shape tests
# run on containerd 1.6 and 2.4, each with SystemdCgroup true and false,
# and the hand-over to a kubelet configured as kubeadm configures it.
# GUEST_PHASES picks phases (hack/guest.sh phases lists them), e.g.
# make e2e-guest GUEST_PHASES=containerd2-systemd
GUEST_PHASES ?=
guest-image: ## build the guest's disk (debootstrap; cached until its recipe changes)
	bash hack/guest.sh image

e2e-guest: build testbed-up guest-image ## the node-shape tests and the hand-over in a systemd + cgroup v2 guest (qemu): containerd 1.6 and 2.4, both cgroup drivers
	bash $(TESTBED) kubelet-build
	bash hack/guest.sh test $(GUEST_PHASES)

# The e2e tests on CRI-O (hack/crio.sh): an installed CRI-O, started beside
# the testbed with a configuration of its own; PODRUN_CRIO names its crio
# binary when it is not in PATH. Not in make test: no CRI-O can be
# installed on the CI machines (the Go module proxy refuses it, Debian has
# none); docs/cri-o.md has the recorded runs. E2ECRIO_RUN picks the tests,
# E2ECRIO_SKIP leaves some out (docs/cri-o.md: those a host that forbids
# lowering oom_score_adj cannot run).
E2ECRIO_SKIP ?=
E2ECRIO_RUN ?= TestE2E(Sync|Volume|Probe|Hook|Signal|Reclaim|Cgroup|ExitCode|CNI|PodIP|HostNetwork|Exec|Cp|Logs|Ps|Detach|Down|Run|Wait|Timeout|Output|Streams|Image|Pull|Container|Hosts|Hostname|Termination|JUnit|Admit|Conformance)
e2e-crio: build testbed-up ## the e2e tests on an installed CRI-O (PODRUN_CRIO=/path/to/crio), beside the testbed; not in make test
	bash hack/crio.sh up
	set -a; eval "$$(bash hack/crio.sh env)"; set +a; \
	$(GO) build -o bin/testlog ./hack/testlog && \
	PODRUN_E2E_BINARY=$(CURDIR)/$(BIN) \
	$(GO) test -count=1 -tags e2e -timeout $(E2E_TIMEOUT) -run '$(value E2ECRIO_RUN)' $(if $(value E2ECRIO_SKIP),-skip '$(value E2ECRIO_SKIP)') -json $(E2E_PKG) 2>&1 | bin/testlog -log /tmp/podrun-e2e-crio.log; \
	s=("$${PIPESTATUS[@]}"); [[ $${s[0]} == 0 && $${s[1]} == 0 ]]

# The differential test against a real kubelet (docs/kubelet-differences.md):
# the oracle kubelet is started first, from a clean state (kubelet-down:
# no pods or static manifests an earlier, interrupted run left), and stopped
# after, whatever the result
# (kubelet-down restores the host settings it changed). The table of the run
# is written to $(CONFORMANCE_REPORT) and printed. The control-plane test
# (TestKubeletControlPlane, docs/bootstrap.md) needs kubeadm and the
# control-plane images: controlplane-images builds them once per version
# (cached in the testbed dir) and pushes them to the mirror.
CONFORMANCE_REPORT ?= /tmp/podrun-conformance-kubelet.txt
conformance-kubelet: build testbed-up ## every runnable corpus row on podrun and on a real kubelet, compared (undocumented differences fail); the hand-over to a real kubelet; a kubeadm control plane under podrun, handed over to it
	nice -n 10 bash $(TESTBED) controlplane-images
	bash $(TESTBED) kubelet-down
	bash $(TESTBED) kubelet-up
	set -a; eval "$$(bash $(TESTBED) env)"; set +a; \
	$(GO) build -o bin/testlog ./hack/testlog && \
	PODRUN_E2E_BINARY=$(CURDIR)/$(BIN) PODRUN_CONFORMANCE_REPORT=$(CONFORMANCE_REPORT) \
	$(GO) test -count=1 -tags e2e -timeout 50m -run '^TestKubelet(Conformance|Handover|ControlPlane)$$' -json $(E2E_PKG) 2>&1 | bin/testlog -log /tmp/podrun-conformance-kubelet.log; \
	s=("$${PIPESTATUS[@]}"); \
	$(GO) test -count=1 -tags e2e -run 'E2E' ./e2e/kubeletoracle/ || s[0]=1; \
	bash $(TESTBED) kubelet-down; \
	cat $(CONFORMANCE_REPORT) 2>/dev/null; \
	[[ $${s[0]} == 0 && $${s[1]} == 0 ]]

# CI has the testbed to itself: the fault tests that restart containerd
# (e2e/faults_test.go) may run. Elsewhere they fail unless
# PODRUN_E2E_RESTART_RUNTIME=1 is set, which only a testbed of one's own
# should get (hack/testbed.sh up --flavor scratch).
test: export PODRUN_E2E_RESTART_RUNTIME = 1
test: vet unit fuzz-short e2e e2e-containerd16 conformance-kubelet e2e-guest ## every test: vet, unit, each fuzz target briefly, end-to-end on containerd v2 and 1.6, the differential test against a real kubelet, the systemd + cgroup v2 guest (what CI runs)

# BENCH_FLAGS go to hack/bench, e.g. BENCH_FLAGS='-sizes 1,10 -rounds 3' or
# BENCH_FLAGS='-tables cold -cold-rounds 5'.
BENCH_FLAGS ?=
# The cold-start table pulls from the slow registry, which the bench brings
# up with each link model in turn and down after it (and this rule takes it
# down again, whatever the bench's outcome), and brings the shared kubelet up
# under its lock if it is down (and down again after).
bench: build testbed-up ## cold start on a slow registry vs the kubelet, podman, bare CRI; podrun vs bare CRI and podman, 1 to 100 pods, containerd v2 and 1.6
	bash $(TESTBED) up --flavor debian
	bash $(TESTBED) podman || echo "bench: podman could not be set up: it shows as absent" >&2
	$(GO) run ./hack/bench -podrun ./$(BIN) \
		-testbed "$$(bash $(TESTBED) env | sed -n 's/^PODRUN_TESTBED_DIR=//p')" \
		-testbed "$$(bash $(TESTBED) env --flavor debian | sed -n 's/^PODRUN_TESTBED_DIR=//p')" $(BENCH_FLAGS); \
		rc=$$?; bash $(TESTBED) slow-registry down; exit $$rc

# Native Go fuzz targets, package:Name (docs/fuzzing.md). Each runs for
# FUZZTIME; minimizing a new input is capped at 10 s so that the time goes to
# fuzzing. The inputs found are cached in $(shell $(GO) env GOCACHE)/fuzz and
# a failing input is written to the package's testdata/fuzz/<Name>/.
FUZZ_TARGETS := sources:FuzzDecode sources/apijson:FuzzFillAsJSON sources/apijson:FuzzMarshalAsJSON sources/imageref:FuzzSplit runner:FuzzExpand runner:FuzzCRILog runner/credentials:FuzzKeyring volumes:FuzzAtomicWriter volumes:FuzzSubPath runner/artifacts:FuzzUntar
FUZZTIME ?= 60s
# CI's brief run counts executions: Go 1.26's fuzz coordinator can fail a
# target with "context deadline exceeded" when a duration -fuzztime ends
# while a worker is busy (go.dev/issue/75804, fixed in Go 1.27), which a
# loaded CI machine hits; an Nx budget has no deadline.
FUZZTIME_SHORT ?= 300x
# go test's own -timeout (10m by default) bounds the whole fuzz run too.
FUZZTIMEOUT ?= 1h
FUZZFLAGS ?= -fuzzminimizetime 10s -timeout $(FUZZTIMEOUT)

fuzz: ## run every fuzz target for FUZZTIME each (default 60s); prints each one's executions
	@fail=0; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; start=$$(date +%s); \
		echo "== ./$$pkg $$name for $(FUZZTIME)"; \
		$(GO) test ./$$pkg -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) $(FUZZFLAGS) 2>&1 | \
			awk '/^fuzz: elapsed/ { last = $$0; next } { print } END { if (last) print last }'; \
		[[ $${PIPESTATUS[0]} == 0 ]] || fail=1; \
		echo "   ($$(( $$(date +%s) - start ))s with the build)"; \
	done; exit $$fail

# In make test: about 50 s with the coverage-instrumented builds cached,
# 2 to 9 minutes from an empty build cache (docs/fuzzing.md).
fuzz-short: ## every fuzz target briefly (FUZZTIME_SHORT, default 300 executions each), as CI does
	$(MAKE) --no-print-directory fuzz FUZZTIME=$(FUZZTIME_SHORT)

clean: ## remove build output
	rm -rf bin
