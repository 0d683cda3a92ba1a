# LLeMbas — see README.md. `make run` opens the app; `make test` runs every test.
SHELL := /bin/bash
export PATH := $(PATH):/usr/local/go/bin
GO ?= go
BIN := bin
DESKTOP_TAGS := desktop,production,webkit2_41
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)

.PHONY: run serve server desktop package test unit e2e fuzz bench screenshots lint vendor-verify vendor-update clean

## run: build and open the desktop app (installs the GTK/WebKit build packages on Debian/Ubuntu if missing); with no display, serves to a browser instead
run:
	@if [ -z "$$DISPLAY$$WAYLAND_DISPLAY" ]; then \
		echo "No display here, so no window: serving LLeMbas to your browser instead."; \
		$(MAKE) --no-print-directory serve; \
	else \
		$(MAKE) --no-print-directory desktop && ./$(BIN)/lembas; \
	fi

## serve: build the headless server and run it on 127.0.0.1:8484 (LEMBAS_ADDR to change)
serve: server
	./$(BIN)/lembas-server --serve

## server: static CGO_ENABLED=0 headless binary (no window; for a NAS)
server:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/lembas-server ./app

## desktop: the desktop app (GTK + WebKitGTK 4.1)
desktop:
	@build/deps.sh desktop
	$(GO) build -trimpath -tags $(DESKTOP_TAGS) -ldflags '$(LDFLAGS)' -o $(BIN)/lembas ./app

## package: the .deb (nfpm) with the desktop binary, the .desktop file and the icons
package: desktop
	VERSION=0.1.0+$(subst -,.,$(VERSION)) $(GO) tool nfpm package -f build/nfpm.yaml -p deb -t $(BIN)/

## test: everything — vet, vendored-file hashes, unit tests, Chromium and Xvfb tests
test:
	@build/deps.sh test
	@build/mcp-everything.sh >/dev/null
	$(GO) vet ./...
	$(GO) vet -tags $(DESKTOP_TAGS) ./app
	$(GO) run ./build/vendor verify
	$(GO) test -count=1 -timeout 40m ./...
	$(GO) test -count=1 -tags $(DESKTOP_TAGS) ./app
	@$(MAKE) --no-print-directory fuzz FUZZTIME=20000x

## fuzz: run each fuzz target for FUZZTIME (default 30s; a count such as 20000x
## has no deadline: Go 1.26's coordinator can fail a time budget at its end with a
## bare "context deadline exceeded" on a busy machine, go.dev/issue/75804)
FUZZTIME ?= 30s
fuzz:
	@for f in FuzzParseSSE FuzzThinkSplitter FuzzToolCallAccumulator; do \
		$(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 2s ./backend/llm || exit 1; \
	done
	$(GO) test -run '^$$' -fuzz '^FuzzProcess$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 2s ./backend/attach

## unit: the fast tests only (no browser, no window)
unit:
	$(GO) test -count=1 ./backend/... ./build/...

## e2e: the Chromium and desktop tests only
e2e:
	@build/deps.sh test
	$(GO) test -count=1 -v ./tests/...

## bench: benchmarks, median of three runs, ending with `figure` lines
bench:
	@build/bench.sh

## screenshots: regenerate docs/screenshots (the desktop app under Xvfb, the browser in Chromium, both themes)
screenshots:
	@build/deps.sh test
	LEMBAS_ARTIFACTS=$(CURDIR)/docs/screenshots $(GO) test -count=1 -run 'TestDesktopApp|TestShellInChromium|TestChatInChromium' ./tests/desktop ./tests/e2e

## lint: formatting, vet, import rules, vendored hashes, JS syntax
lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...
	$(GO) vet -tags $(DESKTOP_TAGS) ./app
	@! grep -rlE '"github.com/(wailsapp/wails/v2|spf13/cobra)' backend --include='*.go' || { echo "backend/ must not import Wails or cobra"; exit 1; }
	$(GO) run ./build/vendor verify
	@if command -v node >/dev/null; then for f in $$(find frontend/js -name "*.js"); do node --check "$$f"; done; fi

vendor-verify:
	$(GO) run ./build/vendor verify

## vendor-update: re-fetch vendored browser libraries with `npm pack` and rewrite the lock
vendor-update:
	$(GO) run ./build/vendor update

clean:
	rm -rf $(BIN)
