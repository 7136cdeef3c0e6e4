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
    static func noisePNG(in root: TemporaryDirectory, name: String = "noise.png") throws -> String {
        let image = noise(width: 1500, height: 1500, seed: 0x2545_F491_4F6C_DD1D)
        try ImageEncoder.encode(image, as: .png()).write(to: root.child(name))
        return root.child(name).path
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
        // What leaves the contents as they were is no change: new permissions, another name, a
        // file renamed over this one's name (the mapping is the old file's).
        let other = try await Self.fetched(try Self.noisePNG(in: root, name: "other.png"), root: root)
        #expect(chmod(root.child("other.png").path, 0o600) == 0 && rename(root.child("other.png").path, root.child("moved.png").path) == 0)
        try Data("replacement".utf8).write(to: root.child("elsewhere.png"))
        #expect(rename(root.child("elsewhere.png").path, root.child("moved.png").path) == 0)
        #expect(!InputFile.wasCutShort(other))
        #expect(throws: PipelineError.decoding(.corrupt(format: .png, reason: "the file changed while it was read"))) {
            try ImagePipeline.checkWhole(data, fileType: .png)
        }
    }

    /// Through the pipeline: a local file cut short, or written in place, between its fetch and
    /// its decode fails the request with the typed error and nothing is kept: the next request,
    /// once the file is whole again, is made of the file as it is.
    @Test func aFileChangedBetweenItsFetchAndItsDecodeIsRefusedAndNothingIsKept() async throws {
        let root = try TemporaryDirectory(), cache = try TemporaryDirectory()
        let path = try Self.noisePNG(in: root)
        let whole = try Data(contentsOf: URL(fileURLWithPath: path))
        let pipeline = try ImagePipeline(configuration: ImagePipeline.Configuration(cacheDirectory: cache.url, fetchers: [FileFetcher(root: root.url)],
                                                                                   downloadRate: nil))
        for inPlace in [false, true] {
            // (Another size each time: the first answer is kept, and must not answer the second.)
            let side = inPlace ? 90 : 100
            let request = ImageRequest(url: URL(fileURLWithPath: path), processing: .processors([Resize(width: side, height: side, mode: .fit)]))
            // Called as the fetch ends, before the decode.
            let token = pipeline.addObserver { event in
                guard case .downloadEnded(_, _, nil) = event else { return }
                if inPlace {
                    guard let handle = FileHandle(forWritingAtPath: path) else { return }
                    try? handle.seek(toOffset: 4096)
                    try? handle.write(contentsOf: Data(repeating: 0x5A, count: 4096))
                    try? handle.close()
                    // (Its modification time set apart from the mapping's: a kernel's coarse clock may not.)
                    try? FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_000_000)], ofItemAtPath: path)
                } else {
                    _ = truncate(path, 64 << 10)
                }
            }
            await #expect(throws: PipelineError.decoding(.corrupt(format: .png, reason: "the file changed while it was read")), "in place: \(inPlace)") {
                try await pipeline.image(for: request)
            }
            pipeline.removeObserver(token)
            try whole.write(to: URL(fileURLWithPath: path))
            let made = try await pipeline.image(for: request)
            #expect(made.tier == .file && made.image.width == side, "in place: \(inPlace): \(made.tier)")
        }
        await pipeline.close()
    }
}
