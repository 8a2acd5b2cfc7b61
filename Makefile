# fasd — make targets. `make help` lists them.
GO       ?= go
PKGS     ?= ./...
BIN      ?= bin/fasd
DEMO_DIR ?= demo-db
# staticcheck, pinned; make test runs it from PATH or through go run
STATICCHECK ?= staticcheck
STATICCHECK_VERSION ?= v0.8.2

.PHONY: help build test testrace short lint fmt-check vet tidy-check staticcheck fuzz bench bench-large crash demo clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

build: ## build the fasd command into bin/
	$(GO) build -o $(BIN) ./cmd/fasd

test: fmt-check vet tidy-check staticcheck ## gofmt, vet, go.mod tidiness and staticcheck, every test, the pure-Go (noasm) numeric core, the engine's and the HTTP API's concurrency tests under -race, the short crash- and fault-injection suites (crashtest tag)
	$(GO) test -count=1 $(PKGS)
	$(GO) test -tags noasm -count=1 ./fasd/tensor/... ./fasd/pcg/... ./fasd/autodiff/... ./fasd/nn/...
	$(GO) test -race -short -count=1 -run 'Incremental|Property' ./query/
	$(GO) test -race -short -count=1 ./httpapi/
	$(GO) test -tags crashtest -count=1 -run 'TestCrashInjection$$|TestFaultInjection$$|TestFullDisk$$|TestFillDisk$$|TestPebbleAbort$$|TestWorkerKilledMidPart$$|TestWorkerFollowsNewModels$$' ./cmd/fasd/

short: ## the quick tests only
	$(GO) test -short -count=1 $(PKGS)

testrace: ## tests under the race detector (short mode)
	$(GO) test -race -short -count=1 $(PKGS)

lint: fmt-check vet tidy-check staticcheck ## gofmt, vet, go.mod tidiness, staticcheck and the lint-as-test rules
	$(GO) test -count=1 ./internal/lint

tidy-check:
	$(GO) mod tidy -diff

# staticcheck: the one on PATH when it is the pinned version, otherwise the
# pinned version built and run through the Go module proxy (go run caches it).
staticcheck:
	@if command -v $(STATICCHECK) >/dev/null 2>&1 && $(STATICCHECK) -version 2>/dev/null | grep -q '$(patsubst v%,%,$(STATICCHECK_VERSION))'; then \
	  echo "$(STATICCHECK) $(PKGS)"; $(STATICCHECK) $(PKGS); \
	else \
	  echo "staticcheck $(STATICCHECK_VERSION) not on PATH: go run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)"; \
	  $(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) $(PKGS); \
	fi

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

fuzz: ## run every fuzz target for 10 s each
	@for pkg in $$($(GO) list $(PKGS)); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime 10s $$pkg || exit 1; \
	  done; \
	done

bench: ## the standard benchmarks (figures go to BENCHMARKS.md)
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

bench-large: ## the Pokec-sized benchmarks (slow; opt-in)
	FASD_BENCH_LARGE=1 $(GO) test -run '^$$' -bench . -benchmem -timeout 60m $(PKGS)

CRASH_KILLS ?= 20
# the binary of the crash suite: built with the crashtest tag, which
# compiles in the FASD_TEST_KILL_AT hook that no other build has
CRASH_BIN ?= bin/fasd-crashtest

crash: ## the long crash- and fault-injection suites on a crashtest build of fasd: kill -9 at every stage boundary and at $(CRASH_KILLS) random moments, and as many random cancellations, of load, train, materialize and refresh; ENOSPC and EIO at every file operation of load, update --refresh, train, materialize and refresh (figures in README.md, Reliability)
	$(GO) build -tags crashtest -o $(CRASH_BIN) ./cmd/fasd
	FASD_CRASH_BIN=$(abspath $(CRASH_BIN)) FASD_CRASH_KILLS=$(CRASH_KILLS) $(GO) test -tags crashtest -count=1 -v -timeout 60m -run 'TestCrashInjection$$' ./cmd/fasd/
	FASD_CRASH_BIN=$(abspath $(CRASH_BIN)) FASD_FAULT_ALL=1 $(GO) test -tags crashtest -count=1 -v -timeout 90m -run 'TestFaultInjection$$' ./cmd/fasd/

demo: build ## the main job end to end on a generated graph with removable bias: FASD and fasd_gcn vs w/o Diffusion, the GCN and the majority constant over 5 seeds, then views, queries, an update (about 2 minutes)
	$(BIN) demo --dir $(DEMO_DIR)

clean:
	rm -rf bin $(DEMO_DIR)
