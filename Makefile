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

.PHONY: help build demo test unit e2e bench testbed-up testbed-down kubelet-up kubelet-down kubelet-test vet clean fuzz fuzz-short

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F ':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

# urfave_cli_no_docs leaves out the man/markdown generators podrun never uses
# (and their start-up cost).
GOFLAGS_BUILD := -tags urfave_cli_no_docs -ldflags '-s -w'

build: ## build bin/podrun
	$(GO) build $(GOFLAGS_BUILD) -o $(BIN) .

testbed-up: ## install and start the testbed (containerd, runc, CNI, registries, images)
	bash $(TESTBED) up

testbed-down: ## stop what the testbed started
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

unit: ## unit tests: pure tables, the fake CRI server, the CLI
	$(GO) test -count=1 ./...

e2e: build testbed-up ## end-to-end tests of bin/podrun against the real testbed
	set -a; eval "$$(bash $(TESTBED) env)"; set +a; \
	$(GO) build -o bin/testlog ./hack/testlog && \
	PODRUN_E2E_BINARY=$(CURDIR)/$(BIN) \
	$(GO) test -count=1 -tags e2e -timeout $(E2E_TIMEOUT) -run '$(E2E_RUN)' -json ./e2e/ 2>&1 | bin/testlog -log /tmp/podrun-e2e.log; \
	s=("$${PIPESTATUS[@]}"); [[ $${s[0]} == 0 && $${s[1]} == 0 ]]

test: vet unit e2e ## every test: vet, unit and end-to-end (what CI runs)

bench: build testbed-up ## compare podrun with the bare CRI call sequence (1 and 10 pods)
	set -a; eval "$$(bash $(TESTBED) env)"; set +a; \
	$(GO) run ./hack/bench -podrun ./$(BIN)

# Native Go fuzz targets, package:Name (docs/fuzzing.md). Each runs for
# FUZZTIME; minimizing a new input is capped at 10 s so that the time goes to
# fuzzing. The inputs found are cached in $(shell $(GO) env GOCACHE)/fuzz and
# a failing input is written to the package's testdata/fuzz/<Name>/.
FUZZ_TARGETS := sources:FuzzDecode runner:FuzzExpand runner:FuzzCRILog volumes:FuzzAtomicWriter volumes:FuzzSubPath
FUZZTIME ?= 60s
FUZZTIME_SHORT ?= 5s
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

fuzz-short: ## every fuzz target briefly (FUZZTIME_SHORT, default 5s each), as CI does
	$(MAKE) --no-print-directory fuzz FUZZTIME=$(FUZZTIME_SHORT)

clean: ## remove build output
	rm -rf bin
