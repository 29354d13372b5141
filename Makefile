# modelplane: `make run` starts everything on embedded defaults; `make test`
# installs and starts the real services the tests need, then runs every test.
SHELL := /bin/bash
.DEFAULT_GOAL := help
SERVICES ?= postgres
NPM_FLAGS := --no-audit --no-fund --loglevel=error

.PHONY: help install build run test test-fast lint typecheck services services-stop clean

help:
	@echo "make run         install, build, migrate and start modelplane dev (ports 8080/8081/8082)"
	@echo "make test        install and start test services, then lint, typecheck and run every test"
	@echo "make test-fast   the fast tests on embedded PGlite (same as npm test)"
	@echo "make services    start the services the tests need ($(SERVICES))"

node_modules/.installed: package.json package-lock.json
	npm ci $(NPM_FLAGS)
	@touch $@

install: node_modules/.installed

build: install
	npm run build --silent

run: build
	node bin/modelplane.js dev

lint: install
	npx eslint --max-warnings 0 .

typecheck: install
	npx tsc -p tsconfig.json --noEmit

test-fast: install
	npm test --silent

services:
	bash scripts/services/all.sh start $(SERVICES)

services-stop:
	bash scripts/services/all.sh stop

test: install services lint typecheck build
	npm test --silent
	eval "$$(bash scripts/services/all.sh env $(SERVICES))" && npm run test:all --silent

clean:
	rm -rf dist node_modules .modelplane
