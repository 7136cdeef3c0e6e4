import EaselCodecs
import EaselSupport
import EaselTestSupport
import Foundation
import Testing

/// `easel thumbnail`'s limits follow memory, not a pixel count (issue 40): a 200 MP PNG, four
/// times the server's source limit, thumbnails with the defaults, and what it adds to the
/// process's peak memory over a small file's run is bounded by the shrinking decode, not the
/// photo; a file whose estimate is past `--memory-budget` is refused naming the budget.
@Suite("easel thumbnail's limits follow memory", .timeLimit(.minutes(3)))
struct BigSourceTests {
    /// Runs `easel ARGUMENTS` as a child and waits for it with `wait4`: its exit status, its
    /// peak resident memory in bytes (`ru_maxrss`), and what it wrote (its output and errors).
    static func measured(_ arguments: [String], in directory: TemporaryDirectory) throws -> (status: Int, peak: Int, error: String) {
        let program = """
            import os, subprocess, sys
            with open(sys.argv[1], "wb") as errors:
                child = subprocess.Popen(sys.argv[2:], stdout=errors, stderr=errors)
                _, status, usage = os.wait4(child.pid, 0)
            print(os.waitstatus_to_exitcode(status), usage.ru_maxrss * 1024)
            """
        let output = directory.child("measured.txt"), errors = directory.child("errors.txt")
        let shell = "/usr/bin/python3 -c '\(program)' \(errors.path) \(builtProduct("easel").path) \(arguments.joined(separator: " ")) > \(output.path)"
        #expect(try runTool("/bin/sh", ["-c", shell], timeout: 120), "the measured run")
        let fields = try String(contentsOf: output, encoding: .utf8).split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        try #require(fields.count == 2)
        return (fields[0], fields[1], try String(contentsOf: errors, encoding: .utf8))
    }

    /// A `side`² RGB PNG written a row at a time (zlib level 1, filter none): a gradient shifted
    /// on each row, so it is never held whole, here or by the writer.
    static func writeHugePNG(side: Int, to url: URL) throws {
        let program = """
            import struct, sys, zlib
            side, path = int(sys.argv[1]), sys.argv[2]
            def chunk(kind, data):
                return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
            base = bytes(x * 256 // side for x in range(side) for _ in range(3))
            shifts = [bytes((v + k) % 256 for v in range(256)) for k in range(256)]
            packer = zlib.compressobj(1)
            with open(path, "wb") as out:
                out.write(b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)))
                for y in range(side):
                    piece = packer.compress(b"\\x00" + base.translate(shifts[y * 256 // side]))
                    if piece:
                        out.write(chunk(b"IDAT", piece))
                out.write(chunk(b"IDAT", packer.flush()) + chunk(b"IEND", b""))
            """
        #expect(try runTool("/usr/bin/python3", ["-c", program, String(side), url.path], timeout: 120), "python3 wrote the PNG")
    }

    @Test func aTwoHundredMegapixelPNGThumbnailsInBoundedMemory() throws {
        let directory = try TemporaryDirectory()
        try Self.writeHugePNG(side: 14_142, to: directory.child("huge.png"))
        try Self.writeHugePNG(side: 500, to: directory.child("small.png"))
        let arguments = ["thumbnail", "--size", "256x256", "--jobs", "1", "--output-dir", directory.child("out").path]
        let small = try Self.measured(arguments + [directory.child("small.png").path], in: directory)
        #expect(small.status == 0, "\(small.error)")
        let huge = try Self.measured(arguments + [directory.child("huge.png").path], in: directory)
        #expect(huge.status == 0, "\(huge.error)")
        let info = try ImageDecoder.info(of: try Data(contentsOf: directory.child("out/tn_huge.jpg")))
        #expect(info.width == 256 && info.height == 256)
        // Decoded at 1/8 (1768² pixels, 12.5 MB), resized, encoded: far from the 800 MB a full
        // decode would take (12 MiB over the small file's run in a debug build; the bound leaves
        // room for the shadow memory of ThreadSanitizer's build, which CI also runs this under).
        #expect(huge.peak - small.peak < 192 << 20, "200 MP: \(huge.peak >> 20) MiB at its peak, a 500² PNG \(small.peak >> 20) MiB")
    }

    @Test func aFilePastTheMemoryBudgetIsRefusedNamingIt() throws {
        let directory = try TemporaryDirectory()
        // A BMP with alpha decodes at full size (an opaque one shrinks on load): 2000² is 16 MB of
        // pixels, and its 16 MB of file stays read.
        let pixels = painted(width: 2000, height: 2000) { x, y in [UInt8(x % 256), UInt8(y % 256), 90, x == 0 && y == 0 ? 0 : 255] }
        try ImageEncoder.encode(pixels, as: .bmp).write(to: directory.child("big.bmp"))
        let arguments = ["thumbnail", "--size", "64x64", "--output-dir", directory.child("out").path, directory.child("big.bmp").path]
        let refused = try Self.measured(arguments + ["--memory-budget", "8MB"], in: directory)
        #expect(refused.status == 1)
        #expect(refused.error.contains("past the memory budget of 8 MiB (--memory-budget)"), "\(refused.error)")
        #expect(!FileManager.default.fileExists(atPath: directory.child("out/tn_big.jpg").path))
        let admitted = try Self.measured(arguments + ["--memory-budget", "128MB"], in: directory)
        #expect(admitted.status == 0, "\(admitted.error)")
    }
}
