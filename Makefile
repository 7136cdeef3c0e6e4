# The two commands of the README, plus the ones CI adds. Each installs what it needs first, and
# only that (scripts/install-deps.sh's groups: build, test, web; scripts/check-setup.sh checks
# that `make run` asks for the build group alone).
.PHONY: configuration-reference figures run test test-tsan fuzz fuzz-urls fuzz-build fuzz-smoke deps deps-build deps-test deps-web deps-cluster check-setup crash-test table-disk-full disk-cache-full browser-test load cluster cluster-test varnish-test compat-test image image-test docs

# The commit every program is built from, in its GNU build ID (`easel --version`): a linker flag,
# so a new commit relinks and recompiles nothing (scripts/build-id.sh).
BUILD_ID := $(shell scripts/build-id.sh)

# Everything every target below uses.
deps:
	@scripts/install-deps.sh

deps-build:
	@scripts/install-deps.sh build

deps-test:
	@scripts/install-deps.sh build test

deps-web:
	@scripts/install-deps.sh build web

deps-cluster:
	@scripts/install-deps.sh build test web

# The main job: the image server on the bundled sample photos, http://127.0.0.1:8080/ (Ctrl-C
# stops it gracefully). Extra flags: make run ARGS="--port 9000".
run: deps-build
	swift build -c release --product easel $(BUILD_ID)
	swift build -c release --product EaselFaces $(BUILD_ID)  # the face plugin, loaded on first use
	.build/release/easel serve $(ARGS)

# Every test, debug build, warnings treated as errors. Two runs: the suites that make their
# media with child processes (ffmpeg's encoders, Python's imagehash) and paint large canvases
# run after the others, so that on two cores their CPU does not push the suites bound by time
# (sockets waiting 30 s for an answer, a server's request timeout) past their limits.
# Within a run, Swift Testing starts every test at once unless told otherwise: on two cores, 490
# tests each with a server, sockets and codecs at once pushed tests that are fast alone (0.06 s)
# past their 30 s socket and request limits. TEST_WIDTH bounds how many test cases run at the same
# time (Swift Testing's SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH; a test's time limit counts
# from when it gets its turn). The default, four, is twice the cores of the machines CI runs on.
MEDIA_SUITES = VideoTests|TextMarkTests|InfoExtrasTests|MarksAndVideoTests
TEST_WIDTH ?= 4
SWIFT_TEST = SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=$(TEST_WIDTH) swift test
test: deps-test
	swift build --build-tests $(BUILD_ID) -Xswiftc -warnings-as-errors
	$(SWIFT_TEST) --skip-build --skip '$(MEDIA_SUITES)'
	$(SWIFT_TEST) --skip-build --filter '$(MEDIA_SUITES)'

# docs/configuration.md from the code's own settings (`easel settings`); a test fails when it is stale.
configuration-reference: deps-build
	swift build --product easel $(BUILD_ID) -Xswiftc -warnings-as-errors
	.build/debug/easel settings > docs/configuration.md

# Every side-by-side peer benchmark (Benchmarks/peers/) at a two-core size, about 12 minutes
# after the release builds: writes docs/figures.md and the README's headline figures.
figures: deps-test
	scripts/figures.sh

# Headless Chromium opens the gallery of a running `easel serve`: every thumbnail must load.
browser-test: deps-build
	scripts/browser-test.sh

# 60 s of wrk at 64 connections over cached and uncached images (see scripts/load.sh).
load: deps-build
	scripts/load.sh

# Every test suite under ThreadSanitizer (own build folder, so it does not clobber the debug
# one): storage, tables, pipeline, codecs, server, remote (S3) and the CLI, whose tests also run
# the TSan-built `easel` as a child process. halt_on_error makes a race in a child process a
# crash its test sees, not a line in a pipe nobody reads.
# Five runs, because TSan slows everything 5-15× on two cores and several tests have time limits:
# the storage suites' synchronous SQLite tests keep the concurrency pool's threads busy for a
# minute, so they run one test at a time (about 55 s) and first; then the pipeline, codec and S3
# suites, one test at a time too (the codec tests' synchronous pixel work, 5-15× slower here, held
# both threads of the concurrency pool while a pipeline test's 20 MB loopback download, which
# needs them for every chunk, ran past its 60 s deadline); then the server's (child processes, real sockets); then the CLI's, whose `easel serve`
# must answer /health behind 5,000 idle connections within 10 s (alone: 8 s under TSan; beside
# the server suite it starved past its limit); last, the media suites (`MEDIA_SUITES`, above).
# Tests/tsan-suppressions.txt names the one false report (the concurrency runtime's continuation
# hand-over, which TSan cannot see into) and why.
# Swift 5 language mode here only: with -sanitize=thread, Swift 6.3.1's region checker rejects
# swift-otel 1.6.0 ("sending 'logger' risks causing data races" in its batch processors), which
# it compiles without a word in the normal build; the compile-time concurrency checks are
# `make test`'s, in Swift 6 mode with warnings as errors, and this run is for races at run time.
TSAN_RUN = TSAN_OPTIONS="$${TSAN_OPTIONS:+$$TSAN_OPTIONS:}halt_on_error=1:suppressions=$(CURDIR)/Tests/tsan-suppressions.txt" \
	$(SWIFT_TEST) --sanitize=thread --scratch-path .build-tsan -Xswiftc -swift-version -Xswiftc 5 $(BUILD_ID)
# The server suites one test at a time as well (about 6 minutes here, 3 in parallel): in
# parallel on two cores, an instrumented test's long decode or face crop held the shared decode
# pool past other servers' 30 s request timeouts (504s and socket timeouts that were load, not
# races).
test-tsan: deps-test
	$(TSAN_RUN) --no-parallel --filter 'EaselStorageTests|EaselTablesTests'
	$(TSAN_RUN) --skip-build --no-parallel --filter 'EaselPipelineTests|EaselCodecsTests|EaselRemoteTests' --skip '$(MEDIA_SUITES)'
	$(TSAN_RUN) --skip-build --no-parallel --filter 'EaselServerTests' --skip '$(MEDIA_SUITES)'
	$(TSAN_RUN) --skip-build --filter 'EaselCLITests'
	$(TSAN_RUN) --skip-build --filter '$(MEDIA_SUITES)'

# The codec fuzzer (Fuzz/CodecFuzzer.swift with EaselCodecs' sources, libFuzzer and
# AddressSanitizer): `fuzz-build` compiles it, `fuzz-smoke` compiles it and runs each target for
# 25 s on the checked-in corpus (CI), `fuzz` runs 200,000 inputs per target.
fuzz-build: deps-build
	FUZZ_BUILD_ONLY=1 scripts/fuzz-codecs.sh

fuzz-smoke: deps-build
	FUZZ_SECONDS=25 scripts/fuzz-codecs.sh

fuzz: deps-build
	scripts/fuzz-codecs.sh

# The URL fuzz target (Tests/EaselServerTests/URLFuzzTests.swift) at length: a million random
# option strings per URL style, parsed and planned (make test runs 20,000 each). Another seed:
# make fuzz-urls SEED=12345.
SEED ?= 1592648798
fuzz-urls: deps-test
	swift build --build-tests $(BUILD_ID)
	EASEL_URL_FUZZ_RUNS=1000000 EASEL_URL_FUZZ_SEED=$(SEED) swift test --skip-build --filter 'URLFuzzTests/randomOption'

# An image table on a real 8 MiB tmpfs filling up: an error, never SIGBUS (needs mount rights).
table-disk-full: deps-build
	scripts/table-disk-full.sh

# A disk cache filling a real 64 MiB tmpfs: trims and removals must still free it (needs mount rights).
disk-cache-full: deps-build
	scripts/disk-cache-full.sh

# 200 SIGKILL rounds against a disk cache writer and 200 against an image table writer (the test
# suite runs 20 of each).
crash-test: deps-test
	scripts/crash-test.sh 200

# Three easel serve instances behind nginx with a result tier shared in S3 (moto) and purges
# relayed between them, on loopback (see scripts/cluster.sh). `cluster` runs it until Ctrl-C;
# `cluster-test` kills an instance under load and checks nothing failed and nothing was made twice.
cluster: deps-cluster
	swift build --product easel $(BUILD_ID) -Xswiftc -warnings-as-errors  # the flags of `make test`: nothing rebuilt after it
	scripts/cluster.sh

cluster-test: deps-cluster
	swift build --product easel $(BUILD_ID) -Xswiftc -warnings-as-errors  # the flags of `make test`: nothing rebuilt after it
	scripts/cluster.sh --test

# easel serve behind a real Varnish with docs/varnish.vcl: Vary, ETag revalidation, Age, signed
# URLs, purge bans.
varnish-test: deps-web
	swift build --product easel $(BUILD_ID) -Xswiftc -warnings-as-errors  # the flags of `make test`: nothing rebuilt after it
	scripts/varnish-test.sh

# imgproxy- and thumbor-compatible URLs made by their real Python clients (imgproxy 1.0.0,
# libthumbor 2.0.2), against a running easel serve (see scripts/compat-test.sh).
compat-test: deps-test
	swift build --product easel $(BUILD_ID) -Xswiftc -warnings-as-errors  # the flags of `make test`: nothing rebuilt after it
	swift build --product EaselFaces $(BUILD_ID) -Xswiftc -warnings-as-errors  # thumbor's smart crops: the face plugin
	scripts/compat-test.sh

# The container image localhost/easel:latest (scripts/image.sh; podman and mmdebstrap, Debian's,
# installed when missing): a Debian 12 root file system from mmdebstrap with only the packages
# easel's libraries come from, imported as the base (no registry), easel, the Swift runtime
# libraries and the sample photos on top. `image-test` builds it and runs its entrypoint (podman
# run where the host allows it, else chroot into the image's root): gallery, thumbnail, health
# check, config file, SIGTERM. EASEL_IMAGE_SKIP_BUILD=1 uses the existing release build.
image: deps-build
	scripts/image.sh

image-test: deps-build
	scripts/image-test.sh

# DocC for every library module (swift-docc-plugin), warnings as errors, into .build/docs/;
# every public symbol documented (scripts/doc-coverage.py over the symbol graphs); the snippets
# the articles show are compiled by the build and run here from the repository root (Server
# serves until stopped: compiled only).
DOC_MODULES = Easel EaselStorage EaselCodecs EaselTables EaselRemote EaselPipeline EaselServer
docs: deps-build
	swift build --build-tests $(BUILD_ID) -Xswiftc -warnings-as-errors  # the flags of `make test`: nothing rebuilt after it
	set -e; rm -rf .build/docs; mkdir -p .build/docs; for module in $(DOC_MODULES); do \
	  swift package --disable-sandbox generate-documentation --target $$module --warnings-as-errors; \
	  cp -R .build/plugins/Swift-DocC/outputs/$$module.doccarchive .build/docs/; \
	done
	swift package dump-symbol-graph --minimum-access-level public
	scripts/doc-coverage.py
	set -e; for snippet in GettingStarted StorageTiers ImageTables PipelineRequests; do .build/debug/$$snippet >/dev/null; done

# `make run` installs only what building and running easel needs: checked without installing.
check-setup:
	scripts/check-setup.sh
