# The two commands of the README, plus the ones CI adds. Each installs what it needs first.
.PHONY: run test test-tsan deps crash-test table-disk-full

deps:
	@scripts/install-deps.sh

# The main job. Until `easel serve` exists (issue 6): thumbnails of the bundled sample photos.
run: deps
	swift build -c release --product easel
	.build/release/easel info Samples/*.jpg Samples/*.png
	.build/release/easel thumbnail Samples/*.jpg Samples/*.png --size 256x256 --output-dir thumbnails

# Every test, debug build, warnings treated as errors.
test: deps
	swift build --build-tests -Xswiftc -warnings-as-errors
	swift test --skip-build

# The storage and table tests under ThreadSanitizer (own build folder, so it does not clobber the
# debug one).
test-tsan: deps
	swift test --sanitize=thread --scratch-path .build-tsan --filter 'EaselStorageTests|EaselTablesTests'

# An image table on a real 8 MiB tmpfs filling up: an error, never SIGBUS (needs mount rights).
table-disk-full: deps
	scripts/table-disk-full.sh

# 200 SIGKILL rounds against a disk cache writer and 200 against an image table writer (the test
# suite runs 20 of each).
crash-test: deps
	scripts/crash-test.sh 200
