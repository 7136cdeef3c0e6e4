import EaselSupport
import EaselTestSupport
import Foundation
import Testing

/// The libraries easel loads on first use (CLazy) are not linked, so no command pays for them at
/// start; and the container image (scripts/image.sh) installs every one the shims open.
@Suite("Libraries loaded on first use", .timeLimit(.minutes(1)))
struct LazyLibrariesTests {
    static let root = S3TestServer.repositoryRoot()

    /// The sonames in image.sh's `lazy_sonames=( … )`.
    static func imageSonames() throws -> Set<String> {
        let script = try String(contentsOf: root.appendingPathComponent("scripts/image.sh"), encoding: .utf8)
        let start = try #require(script.range(of: "lazy_sonames=("))
        let end = try #require(script[start.upperBound...].firstIndex(of: ")"))
        return Set(script[start.upperBound..<end].split(whereSeparator: \.isWhitespace).map(String.init))
    }

    /// Every string literal that names a shared library in the shims' soname tables (and
    /// EASEL_CAIRO_SONAMES), read from the C sources.
    static func shimSonames() throws -> Set<String> {
        var names = Set<String>()
        let sources = root.appendingPathComponent("Sources")
        let files = try #require(FileManager.default.enumerator(atPath: sources.path)).compactMap { $0 as? String }
            .filter { $0.hasPrefix("C") && ($0.hasSuffix(".c") || $0.hasSuffix(".h")) && !$0.hasPrefix("CVideo") }
        for file in files {
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            for line in text.split(separator: "\n") where line.contains("_sonames[]") || line.contains("#define EASEL_CAIRO_SONAMES") {
                for piece in line.split(separator: "\"").enumerated() where piece.offset % 2 == 1 && piece.element.contains(".so.") {
                    names.insert(String(piece.element))
                }
            }
        }
        return names
    }

    @Test func theImageInstallsWhatTheShimsOpenAndEaselLinksNoneOfIt() async throws {
        let image = try Self.imageSonames(), shims = try Self.shimSonames()
        #expect(shims.count >= 10 && shims == image, "shims \(shims.sorted()), image.sh \(image.sorted())")
        let ldd = try await BlockingIOPool.shared.run {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/ldd")
            process.arguments = [builtProduct("easel").path]
            let output = ChildProcesses.pipe()
            process.standardOutput = output
            try ChildProcesses.run(process)
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return text
        }
        #expect(ldd.contains("libjpeg"), "ldd printed: \(ldd.prefix(300))")
        for soname in image {
            #expect(!ldd.contains(soname), "easel links \(soname): every process would load it at start")
        }
    }
}
