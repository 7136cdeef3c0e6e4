import EaselSupport
import EaselCodecs
@testable import EaselPipeline
import EaselStorage
import EaselTables
import EaselTestSupport
import Foundation
import Testing

/// A target that records what it was asked to show.
final class RecordingTarget: ImageTarget {
    let shown = Locked<[(request: String, image: Bitmap?)]>([])
    let failures = Locked<[PipelineError]>([])
    let displays: AsyncStream<Bitmap?>
    private let continuation: AsyncStream<Bitmap?>.Continuation
    init() { (displays, continuation) = AsyncStream.makeStream() }
    func display(_ image: Bitmap?, for request: ImageRequest) {
        shown.withLock { $0.append((request.url?.lastPathComponent ?? "", image)) }
        continuation.yield(image)
    }
    func displayFailure(_ error: PipelineError, for request: ImageRequest) { failures.withLock { $0.append(error) } }
}

struct Photo: ImageEntity {
    let entityID = UUID()
    let sourceImageID = UUID()
    let file: URL
    func sourceImageURL(forFormat name: String) -> URL? { file }
}

@Suite struct ModelTests {
    @Test func fileSourcesStayInsideTheirRoot() async throws {
        let root = try TemporaryDirectory()
        let outside = try TemporaryDirectory()
        try catJPEG.write(to: root.child("cat.jpg"))
        try catJPEG.write(to: outside.child("secret.jpg"))
        try FileManager.default.createSymbolicLink(atPath: root.child("link.jpg").path, withDestinationPath: outside.child("secret.jpg").path)
        try FileManager.default.createSymbolicLink(atPath: root.child("inside.jpg").path, withDestinationPath: root.child("cat.jpg").path)
        let files = FileFetcher(root: root.url)
        try await withPipeline(extraFetchers: [files]) { pipeline, _ in
            let image = try await pipeline.image(for: ImageRequest(url: root.child("cat.jpg"), format: "thumb"))
            #expect(image.tier == .file && image.image.width == 128)
            #expect(try await pipeline.image(for: ImageRequest(url: root.child("inside.jpg"))).image.width == 451)
            let escapes = [
                outside.child("secret.jpg"),
                root.child("link.jpg"),
                URL(fileURLWithPath: root.path + "/../" + outside.url.lastPathComponent + "/secret.jpg"),
                root.child("missing.jpg"),
                root.url,
            ]
            for url in escapes {
                await expectFailure({ if case .fileNotFound = $0 { true } else { false } }) {
                    _ = try await pipeline.image(for: ImageRequest(url: url))
                }
            }
        }
        #expect(files.confinedPath(for: root.child("cat.jpg")) != nil)
        #expect(files.confinedPath(for: URL(fileURLWithPath: root.path + "/%2e%2e/x")) == nil)
    }

    /// A fetcher of our own: "memory://NAME" serves bytes held in a dictionary.
    struct MemoryFetcher: ImageFetcher {
        let files: [String: Data]
        func canFetch(_ url: URL) -> Bool { url.scheme == "memory" }
        func cacheKey(for url: URL) -> String { url.absoluteString }
        func fetch(_ request: FetchRequest, into sink: FetchSink) async throws(PipelineError) -> FetchResponse {
            guard let data = request.url.host.flatMap({ files[$0] }) else { throw .fileNotFound(request.url.absoluteString) }
            sink.reset()
            sink.append(data)
            return FetchResponse(outcome: .complete, metadata: HTTPMetadata(cacheControl: "max-age=60"))
        }
    }

    @Test func customFetchersPlugIn() async throws {
        try await withPipeline(extraFetchers: [MemoryFetcher(files: ["cat": catJPEG])]) { pipeline, _ in
            let response = try await pipeline.image(for: ImageRequest(url: URL(string: "memory://cat")!, format: "thumb"))
            #expect(response.tier == .network && response.image.width == 128)
            await expectFailure({ $0 == .fileNotFound("memory://dog") }) {
                _ = try await pipeline.image(for: ImageRequest(url: URL(string: "memory://dog")!))
            }
        }
    }

    @Test func entitySourcesAreStoredUnderTheirIDs() async throws {
        let root = try TemporaryDirectory()
        try catJPEG.write(to: root.child("cat.jpg"))
        try await withPipeline(extraFetchers: [FileFetcher(root: root.url)]) { pipeline, _ in
            let photo = Photo(file: root.child("cat.jpg"))
            let first = try await pipeline.image(for: ImageRequest(entity: photo, format: "thumb"))
            #expect(first.tier == .file, "read by the file fetcher")
            #expect(try #require(pipeline.table(forFormat: "thumb")).contains(photo.entityID, sourceID: photo.sourceImageID))
            // square needs its own decode scale (1/4; thumb's was 1/2): made after the answer by
            // one more decode in the background (the family promise), stored under the same IDs.
            await pipeline.waitForBackgroundWork()
            #expect(try #require(pipeline.table(forFormat: "square")).contains(photo.entityID, sourceID: photo.sourceImageID))
            #expect(try await pipeline.image(for: ImageRequest(entity: photo, format: "square")).tier == .table)
            #expect(pipeline.counters.decodes == 2)
        }
    }

    @Test func anObservableImageReportsEveryChange() async throws {
        let origin = Origin()
        origin.serve("/cat.jpg", .file(catJPEG))
        try await origin.run { base in
            try await withPipeline { pipeline, _ in
                let model = ObservableImage(pipeline: pipeline, request: ImageRequest(url: base.appendingPathComponent("cat.jpg"), format: "thumb"))
                #expect(model.state == .idle && model.image == nil)
                let changes = model.changes()
                model.load()
                var states: [ObservableImage.State] = []
                for await snapshot in changes {
                    states.append(snapshot.state)
                    if case .loaded = snapshot.state {
                        #expect(snapshot.image?.width == 128)
                        #expect(snapshot.sourceInfo?.width == 451)
                        break
                    }
                }
                #expect(states == [.loading, .loaded(.network)])
                model.load()  // loaded: nothing happens
                #expect(model.state == .loaded(.network))

                let missing = ObservableImage(pipeline: pipeline, request: ImageRequest(url: base.appendingPathComponent("none")))
                let failures = missing.changes()
                missing.load()
                var last: ObservableImage.Snapshot?
                for await snapshot in failures {
                    last = snapshot
                    if case .failed = snapshot.state { break }
                }
                #expect(last?.error == .httpStatus(404, url: base.appendingPathComponent("none").absoluteString))
                #expect(missing.image == nil)
            }
        }
    }

    @Test func aRetargetedTargetNeverShowsAnOldImage() async throws {
        let origin = Origin()
        let gates = (0..<10).map { _ in Gate() }
        for (index, gate) in gates.enumerated() {
            // Each image is a different size, so what is shown tells which request it was for.
            let image = try ImageEncoder.encode(Bitmap(width: 10 + index, height: 10, pixelFormat: .rgba8), as: .png())
            origin.serve("/\(index).png", .gated(image, first: 0, gate: gate))
        }
        try await origin.run { base in
            try await withPipeline { pipeline, _ in
                let loader = ImageTargetLoader(pipeline: pipeline)
                let target = RecordingTarget()
                let placeholder = Bitmap(width: 1, height: 1, pixelFormat: .gray8)
                let events = pipeline.events()
                for index in 0..<10 {
                    loader.load(ImageRequest(url: base.appendingPathComponent("\(index).png")), into: target, placeholder: placeholder)
                }
                // Release the origin's answers newest first, so old ones arrive after the last.
                for gate in gates.reversed() { gate.open() }
                // Every request ends (the first nine cancelled by their successors)...
                var ended = 0
                for await event in events {
                    switch event {
                    case .finished, .failed, .cancelled: ended += 1
                    default: break
                    }
                    if ended == 10 { break }
                }
                // ...and the last one's image reaches the target.
                for await image in target.displays where (image?.width ?? 0) > 1 { break }
                let shown = target.shown.withLock { $0 }
                let images = shown.compactMap { $0.image.flatMap { $0.width > 1 ? $0.width : nil } }
                #expect(images == [19], "only the last request's image was ever shown")
                // Placeholders of loads already replaced when their turn came are skipped too.
                #expect(shown.first?.image?.width == 1, "a placeholder first")
                #expect(shown.last?.image?.width == 19, "the last request's image last")
                #expect(target.failures.withLock { $0 }.isEmpty)
            }
        }
    }
}

/// The output formats read their names, MIME types and extensions from `FormatRegistry`.
@Suite("Output formats from the registry")
struct OutputFormatRegistryTests {
    @Test func everyOutputFormatIsARegisteredTypeThatIsWritten() {
        for format in ImageEncoding.Format.allCases {
            let entry = FormatRegistry.entry(format.fileType)
            #expect(entry.names[0] == format.rawValue)
            #expect(entry.capabilities.contains(.encode) || entry.capabilities.contains(.servedAsItIs))
            #expect(format.contentType == entry.mimeType)
            #expect(format.hasQuality == entry.capabilities.contains(.quality))
            for name in entry.names { #expect(ImageEncoding.Format(name: name) == format) }
        }
        let written = FormatRegistry.entries.filter { !$0.capabilities.isDisjoint(with: [.encode, .servedAsItIs]) }.map(\.type)
        #expect(Set(written) == Set(ImageEncoding.Format.allCases.map(\.fileType)))
        #expect(ImageEncoding.Format(name: "JPG") == .jpeg && ImageEncoding.Format(name: "heif") == .heic)
        #expect(ImageEncoding.Format(name: "tiff") == nil && ImageEncoding.Format(.pdf) == nil)
        #expect(ImageEncoding.Format.jpeg.fileExtension == "jpg")
    }
}
