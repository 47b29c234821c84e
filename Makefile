# evalflow — make help lists the targets.
GO       ?= go
PKGS     ?= ./...
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo 0.1.0-dev)
LDFLAGS  := -X main.version=$(VERSION)

.PHONY: help build test test-short bench bench-cli check deps fmt docs readme-check

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN{FS=":.*## "}{printf "  %-12s %s\n", $$1, $$2}'

build: ## build bin/evalflow
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/evalflow ./cmd/evalflow

deps: ## install what the tests need on a fresh Debian machine (idempotent)
	bash scripts/install-test-deps.sh

test: deps ## install test dependencies, then run every test with the race detector
	$(GO) vet $(PKGS)
	$(GO) test -race -shuffle=on -timeout 45m $(PKGS)
	# The tests that build whole suites of the shared data skip under the
	# race detector (minutes each, far longer instrumented): run here.
	$(GO) test -count=1 -timeout 30m -run 'TestSharedSuitesRate|TestSuiteConformance|TestSuiteRewrites' ./suite/

readme-check: ## run every README.md command as printed on a fresh clone of HEAD (READMECHECK_FLAGS=--skip-make-test)
	bash scripts/readme-check.sh $(READMECHECK_FLAGS)

test-short: ## quick tests without the race detector
	$(GO) test -short $(PKGS)

bench: ## run the benchmarks (figures go to docs/benchmarks.md)
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 3x ./planner/ ./pipelines/ ./cmd/evalflow/
	$(GO) test -run '^$$' -bench . -benchmem ./metrics/ ./sinks/ ./engine/...

bench-cli: ## end-to-end CLI benchmarks vs issue 14's targets (BENCH_ROUNDS, BENCH_ONLY, BENCH_PROFILE=1; scripts/bench-cli.sh)
	bash scripts/bench-cli.sh

check: ## gofmt, go vet and fmt of the shipped pipelines
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); echo 'gofmt needed'; exit 1)
	$(GO) vet $(PKGS)
	$(GO) run ./cmd/evalflow fmt -check pipelines examples

fmt: ## format Go and HCL sources
	gofmt -w $$(git ls-files '*.go')
	$(GO) run ./cmd/evalflow fmt pipelines examples

docs: ## regenerate the generated parts of docs/ (the metric index)
	bash scripts/gen-docs.sh
