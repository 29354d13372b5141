# didyma: `make run` starts everything on embedded defaults, and a Prometheus for its metrics; `make test`
# installs and starts the real services the tests need, then runs every test.
SHELL := /bin/bash
.DEFAULT_GOAL := help
SERVICES ?= postgres pgbouncer rabbitmq minio prometheus jaeger python kserve kube chromium cluster keycloak
NPM_FLAGS := --no-audit --no-fund --loglevel=error
# Every target runs on the project's pinned Node.js LTS (scripts/node.sh), installed once, not on the machine's.
NODE_BIN := $(shell bash scripts/node.sh bin)
$(if $(NODE_BIN),,$(error scripts/node.sh could not install the project's Node.js))
export PATH := $(NODE_BIN):$(PATH)

.PHONY: help install build run test test-fast test-kube test-kube-cluster test-cluster bench bench-scale bench-scale-out bench-kube lint typecheck services services-stop clean

help:
	@echo "make run         install, build, migrate and start didyma dev (ports 8080/8081/8082), with a Prometheus for its metrics (scripts/run.sh)"
	@echo "make test        install and start test services, then lint, typecheck and run every test"
	@echo "make test-fast   the fast tests on embedded PGlite (same as npm test)"
	@echo "make services    start the services the tests need ($(SERVICES))"
	@echo "make test-kube   the Kubernetes tests on the envtest-style control plane (scripts/services/kube.sh)"
	@echo "make test-kube-cluster  the same tests against the cluster of KUBECONFIG, helm from PATH (or TEST_HELM)"
	@echo "make test-cluster  the chart's pods end to end on the single-node cluster (scripts/services/cluster.sh)"
	@echo "make bench       benchmarks on PostgreSQL, RabbitMQ and MLServer: a table, and bench/results/<date>.json"
	@echo "make bench-scale list pages and need_context calls at 10^3 to 10^5 rows, on PostgreSQL: bench/results/scale-<date>.json"
	@echo "make bench-scale-out  1, 2, 4 and 8 executor processes draining one backlog: bench/results/scale-out-<date>.json"
	@echo "make bench-kube  5,000 ModelDeployments in 500 workspaces, operator and resolver: bench/results/kube-config-<date>.json"

node_modules/.installed: package.json package-lock.json
	npm ci $(NPM_FLAGS)
	@touch $@

install: node_modules/.installed

build: install
	npm run build --silent

run: build
	bash scripts/run.sh

lint: install
	npx eslint --cache --cache-location .cache/eslint/ --max-warnings 0 .
	npm run lint:api --silent
	npm run lint:layers --silent
	npm run lint:transactions --silent
	npm run lint:chart --silent

typecheck: install
	npx tsc -p tsconfig.json --noEmit

test-fast: install
	npm test --silent

services:
	bash scripts/services/all.sh start $(SERVICES)

services-stop:
	bash scripts/services/all.sh stop

# Every suite, in two lanes side by side: the fast pass on PGlite and the rest on the real services (scripts/test-lanes.ts).
test: install services lint typecheck build
	npx tsx scripts/test-lanes.ts $(SERVICES)

KUBE_TESTS := 'test/integration/kube-*.test.ts'
KUBE_MOCHA := npx mocha --node-option import=tsx --require test/support/hooks.ts --timeout 180000 --exit $(KUBE_TESTS)

test-kube: install
	bash scripts/services/all.sh start kube >/dev/null
	eval "$$(bash scripts/services/all.sh env kube)" && $(KUBE_MOCHA)

# Any cluster (kind, say): the tests make their own namespaces there and leave them behind.
test-kube-cluster: install
	@test -n "$$KUBECONFIG" || { echo "KUBECONFIG must name the cluster to test against" >&2; exit 2; }
	TEST_KUBECONFIG="$$KUBECONFIG" TEST_HELM="$${TEST_HELM:-$$(command -v helm)}" $(KUBE_MOCHA)

CLUSTER_SERVICES := postgres rabbitmq minio prometheus jaeger kserve cluster

test-cluster: install
	bash scripts/services/all.sh start $(CLUSTER_SERVICES) >/dev/null
	eval "$$(bash scripts/services/all.sh env $(CLUSTER_SERVICES))" && \
	  npx mocha --node-option import=tsx --require test/support/hooks.ts --timeout 600000 --exit 'test/integration/cluster-*.test.ts'

# The platform runs as built (bin/didyma.js): memory figures need the build, not tsx.
bench: build
	bash scripts/services/all.sh start postgres rabbitmq jaeger python >/dev/null
	eval "$$(bash scripts/services/all.sh env postgres rabbitmq jaeger python)" && npx tsx bench/run.ts

# How lists and need_context calls grow with the data (bench/scale.ts); no part of `make test`.
bench-scale: build
	bash scripts/services/all.sh start postgres rabbitmq >/dev/null
	eval "$$(bash scripts/services/all.sh env postgres rabbitmq)" && npx tsx bench/scale.ts

# How the drain grows with executor processes, and what bounds it (bench/scale-out.ts); no part of `make test`.
bench-scale-out: build
	bash scripts/services/all.sh start postgres rabbitmq >/dev/null
	eval "$$(bash scripts/services/all.sh env postgres rabbitmq)" && npx tsx bench/scale-out.ts

# The proxy configuration at scale on the test control plane (bench/kube-config.ts); no part of `make test`.
bench-kube: build
	bash scripts/services/all.sh start kube >/dev/null
	eval "$$(bash scripts/services/all.sh env kube)" && npx tsx bench/kube-config.ts

clean:
	rm -rf dist node_modules .didyma .cache
