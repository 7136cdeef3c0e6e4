import EaselCodecs
@testable import EaselPipeline
import EaselTestSupport
import Foundation
import Glibc
import Testing

/// Local files are fetched as read-only mappings (issue 40): each request waiting for its decode
/// holds a mapping, not a copy, and the pages a header read or a decode touched go back to the
/// kernel; a file that shrinks while it is decoded is a typed error, never a SIGBUS and never an
/// answer made of the zeros read past its new end.
@Suite("Mapped local originals", .timeLimit(.minutes(2)))
struct MappedOriginTests {
    /// A 1500 × 1500 PNG of noise (6.75 MB: noise does not compress) in `root`, and its path.
    static func noisePNG(in root: TemporaryDirectory) throws -> String {
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        let image = paintedOpaque(width: 1500, height: 1500) { _, _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return [UInt8(truncatingIfNeeded: state >> 24), UInt8(truncatingIfNeeded: state >> 32), UInt8(truncatingIfNeeded: state >> 40)]
        }
        try ImageEncoder.encode(image, as: .png()).write(to: root.child("noise.png"))
        return root.child("noise.png").path
    }

    static func fetched(_ path: String, root: TemporaryDirectory) async throws -> Data {
        let sink = FetchSink()
        _ = try await FileFetcher(root: root.url).fetch(FetchRequest(url: URL(fileURLWithPath: path)), into: sink)
        return sink.data
    }

    @Test func aLocalFileIsFetchedAsAMappingWhosePagesGoBack() async throws {
        let root = try TemporaryDirectory()
        let path = try Self.noisePNG(in: root)
        let data = try await Self.fetched(path, root: root)
        #expect(InputFile.isMapped(data) && data.count > 6 << 20)
        let start = try data.withUnsafeBytes { try #require($0.baseAddress) }
        // Every page read (as a decoder that keeps what it reads would), then handed back.
        let touched = data.withUnsafeBytes { bytes in stride(from: 0, to: bytes.count, by: 4096).reduce(0) { $0 &+ Int(bytes[$1]) } }
        #expect(touched >= 0)
        #expect((residentBytes(ofMappingAt: start) ?? 0) >= data.count / 2)
        InputFile.handBack(data)
        #expect(residentBytes(ofMappingAt: start) == 0)
        // The pages read again are the file's: the same image as from a copy read into memory.
        let mapped = try ImageEncoder.encode(try ImageDecoder.decode(data, covering: (200, 200)), as: .png())
        let read = try ImageEncoder.encode(try ImageDecoder.decode(Data(contentsOf: URL(fileURLWithPath: path)), covering: (200, 200)), as: .png())
        #expect(mapped == read)
    }

    @Test func aLocalFileThatShrinksWhileDecodedIsATypedErrorNotAnAnswer() async throws {
        let root = try TemporaryDirectory()
        let path = try Self.noisePNG(in: root)
        let data = try await Self.fetched(path, root: root)
        try ImagePipeline.checkWhole(data, fileType: .png)
        #expect(truncate(path, 64 << 10) == 0)
        // The decoder reads zeros past the new end (no SIGBUS); whatever it makes of them, the
        // pipeline refuses it.
        _ = try? ImageDecoder.decode(data, covering: (200, 200))
        #expect(InputFile.wasCutShort(data))
        #expect(throws: PipelineError.decoding(.corrupt(format: .png, reason: "the file changed (it shrank) while it was read"))) {
            try ImagePipeline.checkWhole(data, fileType: .png)
        }
    }
}
