# podrun — run Kubernetes Pod manifests once on the node's CRI runtime.
# `make help` lists the targets.

SHELL := /bin/bash
GO ?= go
BIN := bin/podrun
TESTBED := hack/testbed.sh
E2E_TIMEOUT ?= 60m
# The package of the end-to-end tests.
E2E_PKG ?= ./
# The e2e tests CI runs on Debian's containerd 1.6 as well (a second testbed
# instance, hack/testbed.sh --flavor debian): the capabilities whose CRI
# traffic differs between the two lines (events or polling, exec, stop and
# teardown, mounts, cgroups, user namespaces, the pod network). E2E16_RUN=E2E
# runs them all.
E2E16_RUN ?= TestE2E(Sync|Volume|Probe|Hook|Signal|Reclaim|Cgroup|ExitCode|Userns|CNI|PodIP|HostNetwork)

.PHONY: help build profile demo test unit e2e e2e-containerd16 bench testbed-up testbed-down vet clean

help: ## list the targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F ':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

# urfave_cli_no_docs leaves out the man/markdown generators podrun never uses
# (and their start-up cost). CGO_ENABLED=0: a static binary (pure Go
# resolver and user lookups), so no dynamic loader, libc mapping or cgo
# thread start: about 1 ms less CPU and 1.5 MiB less RSS per run.
GOFLAGS_BUILD := -tags urfave_cli_no_docs -ldflags '-s -w'

build: ## build bin/podrun
	CGO_ENABLED=0 $(GO) build $(GOFLAGS_BUILD) -o $(BIN) .

profile: ## build bin/podrun-profile: PODRUN_CPUPROFILE=FILE / PODRUN_MEMPROFILE=FILE write pprof profiles of a run
	CGO_ENABLED=0 $(GO) build -tags urfave_cli_no_docs,profile -o bin/podrun-profile .

testbed-up: ## install and start the testbed (containerd, runc, CNI, registries, images)
	bash $(TESTBED) up

testbed-down: ## stop what the testbed started (both instances)
	bash $(TESTBED) down --flavor debian
	bash $(TESTBED) down

demo: build testbed-up ## install what is needed, then run a demo pod through podrun
	set -a; eval "$$(bash $(TESTBED) env)"; set +a; \
	./$(BIN) --root-dir /var/lib/podrun-demo -f testdata/demo.yaml

vet: ## go vet every package
	$(GO) vet ./...
	$(GO) vet -tags e2e ./...

unit: ## unit tests: pure tables, the fake CRI server, the CLI
	$(GO) test -count=1 ./...

e2e: build testbed-up ## end-to-end tests of bin/podrun against the real testbed
	set -a; eval "$$(bash $(TESTBED) env)"; set +a; \
	$(GO) build -o bin/testlog ./hack/testlog && \
	$(GO) test -count=1 -tags e2e -timeout $(E2E_TIMEOUT) -run 'E2E' -json ./ 2>&1 | bin/testlog -log /tmp/podrun-e2e.log; \
	s=("$${PIPESTATUS[@]}"); [[ $${s[0]} == 0 && $${s[1]} == 0 ]]

e2e-containerd16: build testbed-up ## the e2e subset E2E16_RUN on Debian's containerd 1.6, a testbed instance beside the v2 one
	bash $(TESTBED) up --flavor debian
	set -a; eval "$$(bash $(TESTBED) env --flavor debian)"; set +a; \
	$(GO) build -o bin/testlog ./hack/testlog && \
	$(GO) test -count=1 -tags e2e -timeout $(E2E_TIMEOUT) -run '$(E2E16_RUN)' -json $(E2E_PKG) 2>&1 | bin/testlog -log /tmp/podrun-e2e16.log; \
	s=("$${PIPESTATUS[@]}"); [[ $${s[0]} == 0 && $${s[1]} == 0 ]]

test: vet unit e2e e2e-containerd16 ## every test: vet, unit and end-to-end on containerd v2 and 1.6 (what CI runs)

# BENCH_FLAGS go to hack/bench, e.g. BENCH_FLAGS='-sizes 1,10 -rounds 3'.
BENCH_FLAGS ?=
bench: build testbed-up ## podrun vs the bare CRI sequence and podman, 1 to 50 pods, on containerd v2 and 1.6
	bash $(TESTBED) up --flavor debian
	bash $(TESTBED) podman || echo "bench: podman could not be set up: it shows as absent" >&2
	$(GO) run ./hack/bench -podrun ./$(BIN) \
		-testbed "$$(bash $(TESTBED) env | sed -n 's/^PODRUN_TESTBED_DIR=//p')" \
		-testbed "$$(bash $(TESTBED) env --flavor debian | sed -n 's/^PODRUN_TESTBED_DIR=//p')" $(BENCH_FLAGS)

clean: ## remove build output
	rm -rf bin
