import EaselSupport
import EaselCodecs
import EaselStorage
@testable import EaselTables
import EaselTestSupport
import Foundation
import Testing

struct Photo: ImageEntity {
    var entityID: UUID
    var sourceImageID: UUID
    var file: URL?
    var drawing: (@Sendable (Bitmap, ImageFormat) throws -> Bitmap?)?

    init(_ number: UInt64, source: UInt64? = nil, file: URL? = nil,
         drawing: (@Sendable (Bitmap, ImageFormat) throws -> Bitmap?)? = nil) {
        entityID = entity(number)
        sourceImageID = entity(source ?? number + 1000)
        self.file = file
        self.drawing = drawing
    }

    func sourceImageURL(forFormat name: String) -> URL? { file }
    func draw(_ source: Bitmap, for format: ImageFormat) throws -> Bitmap? { try drawing?(source, format) }
}

struct ProviderFailure: Error {}

/// A source provider serving one sample, recording every call it gets.
final class SampleProvider: ImageSourceProvider {
    let source: SourceImage?
    let gate: Gate?
    let processAll: Bool
    let calls = Locked(0)
    let cancelled = Locked<[String]>([])
    let failed = Locked<[ImageTableError]>([])
    let providerCancellations = Locked(0)
    let entered: AsyncStream<Void>
    private let enteredContinuation: AsyncStream<Void>.Continuation
    let cancellations: AsyncStream<Void>
    private let cancellationsContinuation: AsyncStream<Void>.Continuation

    init(_ source: SourceImage?, gate: Gate? = nil, processAll: Bool = true) {
        self.source = source
        self.gate = gate
        self.processAll = processAll
        (entered, enteredContinuation) = AsyncStream.makeStream()
        (cancellations, cancellationsContinuation) = AsyncStream.makeStream()
    }

    func sourceImage(for entity: any ImageEntity, formatName: String) async throws -> SourceImage {
        calls.withLock { $0 += 1 }
        enteredContinuation.yield()
        if let gate {
            do { try await gate.wait() } catch {
                providerCancellations.withLock { $0 += 1 }
                cancellationsContinuation.yield()
                throw error
            }
        }
        guard let source else { throw ProviderFailure() }
        return source
    }

    func shouldProcessAllFormats(inFamily family: String, for entity: any ImageEntity) -> Bool { processAll }
    func didCancel(entity: any ImageEntity, formatName: String) { cancelled.withLock { $0.append(formatName) } }
    func didFail(entity: any ImageEntity, formatName: String, error: ImageTableError) { failed.withLock { $0.append(error) } }

    func waitUntilCalled() async {
        for await _ in entered { return }
    }

    /// Returns once a call of the provider has seen its task cancelled.
    func waitUntilCancelled() async {
        for await _ in cancellations { return }
    }
}

let photoFormats = [
    ImageFormat(name: "thumb", family: "photos", width: 128, height: 128, fit: .fit, maximumCount: 20),
    configured(ImageFormat(name: "square", family: "photos", width: 96, height: 96, fit: .fill, maximumCount: 20)) {
        $0.processors = [try! RoundedCorners(radius: 12)]
    },
    configured(ImageFormat(name: "gray", family: "photos", width: 64, height: 64, maximumCount: 20)) { $0.pixelFormat = .gray8 },
    ImageFormat(name: "avatar", family: "people", width: 48, height: 48, fit: .fill, maximumCount: 5),
]

func sampleData(_ name: String = "coffee-cup-cutout.png") throws -> Data { try Data(contentsOf: sampleURL(name)) }

/// Collects one completion.
final class Completion: Sendable {
    private let stream: AsyncStream<Result<Bitmap, ImageTableError>>
    private let continuation: AsyncStream<Result<Bitmap, ImageTableError>>.Continuation
    let calls = Locked<[Result<Bitmap, ImageTableError>]>([])
    init() { (stream, continuation) = AsyncStream.makeStream() }
    var handler: @Sendable (Result<Bitmap, ImageTableError>) -> Void {
        { [self] result in
            calls.withLock { $0.append(result) }
            continuation.yield(result)
        }
    }
    func next() async -> Result<Bitmap, ImageTableError>? {
        for await result in stream { return result }
        return nil
    }
}

@Suite struct ImageTableCacheTests {
    @Test func formatsAreFoundByNameAndFamily() throws {
        let directory = try TemporaryDirectory()
        let cache = try ImageTableCache(directory: directory.url, formats: photoFormats)
        #expect(cache.format(named: "square")?.height == 96)
        #expect(cache.format(named: "nope") == nil)
        #expect(cache.formats(inFamily: "photos").map(\.name) == ["thumb", "square", "gray"])
        #expect(cache.formats(inFamily: "people").map(\.name) == ["avatar"])
        #expect(cache.table(forFormat: "thumb") != nil)
        #expect(throws: ImageTableError.unknownFormat("nope")) { _ = try cache.cachedImage(for: Photo(1), formatName: "nope") }
        let twice = [photoFormats[0], ImageFormat(name: "thumb", width: 8, height: 8, maximumCount: 1)]
        #expect(throws: ImageTableError.duplicateFormat("thumb")) {
            _ = try ImageTableCache(directory: try TemporaryDirectory().url, formats: twice)
        }
    }

    @Test func entriesAreExactlyTheFormatsProcessingOfTheSource() async throws {
        let directory = try TemporaryDirectory()
        let cache = try ImageTableCache(directory: directory.url, formats: photoFormats)
        let data = try sampleData()
        try await cache.setImage(.encoded(data), for: Photo(1), formatName: "thumb", processingFamily: true)
        #expect(cache.decodeCount == 1)
        // The one decode of the family: at the scale that covers its largest format.
        let decoded = try FamilyDecode(data, targets: cache.formats(inFamily: "photos"), limits: .default).decoded
        for format in cache.formats(inFamily: "photos") {
            let entry = try #require(try cache.cachedImage(for: Photo(1), formatName: format.name))
            let direct = try format.process(decoded)
            #expect(entry.hasSamePixels(as: direct), "\(format.name)")
            #expect(entry.isBorrowed)
        }
        #expect(try cache.cachedImage(for: Photo(1), formatName: "avatar") == nil, "another family")
        // A decoded source, one format only.
        let bitmap = pattern(7, width: 300, height: 200)
        try await cache.setImage(.bitmap(bitmap), for: Photo(2), formatName: "avatar")
        #expect(try #require(try cache.cachedImage(for: Photo(2), formatName: "avatar")).hasSamePixels(as: try photoFormats[3].process(bitmap)))
        #expect(try cache.cachedImage(for: Photo(2), formatName: "thumb") == nil)
    }

    @Test func concurrentRequestsAcrossAFamilyShareOneSourceAndOneDecode() async throws {
        let directory = try TemporaryDirectory()
        let gate = Gate()
        let provider = SampleProvider(.encoded(try sampleData("chelsea-cat.jpg")), gate: gate)
        let cache = try ImageTableCache(directory: directory.url, formats: photoFormats, sourceProvider: provider)
        let photo = Photo(1)
        try await withThrowingTaskGroup(of: (String, Bitmap).self) { group in
            for index in 0..<30 {
                let name = ["thumb", "square", "gray"][index % 3]
                group.addTask { (name, try await cache.image(for: photo, formatName: name)) }
            }
            await provider.waitUntilCalled()
            gate.open()
            var sizes: [String: (Int, Int)] = [:]
            for try await (name, image) in group { sizes[name] = (image.width, image.height) }
            #expect(sizes.count == 3)
        }
        #expect(provider.calls.withLock { $0 } == 1)
        #expect(cache.decodeCount == 1)
        for name in ["thumb", "square", "gray"] { #expect(try cache.imageExists(for: photo, formatName: name)) }
    }

    @Test func theProviderMayAskForOnlyTheRequestedFormat() async throws {
        let directory = try TemporaryDirectory()
        let provider = SampleProvider(.encoded(try sampleData()), processAll: false)
        let cache = try ImageTableCache(directory: directory.url, formats: photoFormats, sourceProvider: provider)
        _ = try await cache.image(for: Photo(1), formatName: "square")
        #expect(try cache.imageExists(for: Photo(1), formatName: "square"))
        #expect(try !cache.imageExists(for: Photo(1), formatName: "thumb"))
    }

    @Test func retrievalIsSynchronousWhenPresentAndAsksTheProviderOtherwise() async throws {
        let directory = try TemporaryDirectory()
        let provider = SampleProvider(.encoded(try sampleData()))
        let cache = try ImageTableCache(directory: directory.url, formats: photoFormats, sourceProvider: provider)
        let missing = Completion()
        #expect(!cache.retrieveImage(for: Photo(1), formatName: "thumb", completion: missing.handler))
        let image = try #require(try await missing.next()?.get())
        #expect(image.width == 128)
        let present = Completion()
        #expect(cache.retrieveImage(for: Photo(1), formatName: "thumb", completion: present.handler))
        #expect(present.calls.withLock { $0.count } == 1, "called before returning")
        #expect(try present.calls.withLock { $0 }[0].get().hasSamePixels(as: image))
        #expect(provider.calls.withLock { $0 } == 1)
    }

    @Test func aCancelledRetrievalNeverDeliversAnImage() async throws {
        let directory = try TemporaryDirectory()
        let gate = Gate()
        let provider = SampleProvider(.encoded(try sampleData()), gate: gate)
        let cache = try ImageTableCache(directory: directory.url, formats: photoFormats, sourceProvider: provider)
        let completion = Completion()
        #expect(!cache.retrieveImage(for: Photo(1), formatName: "thumb", completion: completion.handler))
        await provider.waitUntilCalled()
        cache.cancelImageRetrieval(for: Photo(1), formatName: "thumb")
        guard case .failure(.cancelled) = await completion.next() else {
            Issue.record("the completion must report the cancellation")
            return
        }
        #expect(provider.cancelled.withLock { $0 } == ["thumb"])
        // The provider's task was cancelled: its wait ends with CancellationError.
        await provider.waitUntilCancelled()
        gate.open()
        let retry = try await cache.image(for: Photo(2), formatName: "thumb")  // the cache still works
        #expect(retry.width == 128)
        #expect(provider.providerCancellations.withLock { $0 } == 1)
        #expect(completion.calls.withLock { $0.count } == 1, "one completion, carrying no image")
        #expect(try !cache.imageExists(for: Photo(1), formatName: "thumb"))
    }

    @Test func cancellingOneOfTwoRequestersKeepsTheWork() async throws {
        let directory = try TemporaryDirectory()
        let gate = Gate()
        let provider = SampleProvider(.encoded(try sampleData()), gate: gate)
        let cache = try ImageTableCache(directory: directory.url, formats: photoFormats, sourceProvider: provider)
        let first = Task { try await cache.image(for: Photo(1), formatName: "thumb") }
        await provider.waitUntilCalled()
        let second = Completion()
        #expect(!cache.retrieveImage(for: Photo(1), formatName: "gray", completion: second.handler))  // waiting once it returns
        first.cancel()
        await #expect(throws: ImageTableError.cancelled) { try await first.value }
        gate.open()
        let image = try #require(try await second.next()?.get())
        #expect(image.pixelFormat == .gray8)
        #expect(provider.calls.withLock { $0 } == 1)
        #expect(provider.cancelled.withLock { $0 }.isEmpty)
        #expect(provider.providerCancellations.withLock { $0 } == 0)
    }

    @Test func cancellingEveryRequesterStopsTheProvider() async throws {
        let directory = try TemporaryDirectory()
        let gate = Gate()
        let provider = SampleProvider(.encoded(try sampleData()), gate: gate)
        let cache = try ImageTableCache(directory: directory.url, formats: photoFormats, sourceProvider: provider)
        let tasks = (0..<3).map { _ in Task { try await cache.image(for: Photo(1), formatName: "thumb") } }
        await provider.waitUntilCalled()
        // All three wait for the one work before any is cancelled.
        while cache.waitingRequestCount < 3 { await Task.yield() }
        for task in tasks { task.cancel() }
        for task in tasks { await #expect(throws: ImageTableError.cancelled) { try await task.value } }
        // The provider's wait ends with CancellationError once its task is cancelled; the next
        // request starts a fresh call.
        await provider.waitUntilCancelled()
        let again = Task { try await cache.image(for: Photo(1), formatName: "thumb") }
        await provider.waitUntilCalled()
        gate.open()
        _ = try await again.value
        #expect(provider.providerCancellations.withLock { $0 } == 1)
        #expect(provider.cancelled.withLock { $0 } == ["thumb"])
    }

    @Test func failuresAreTypedAndReported() async throws {
        let directory = try TemporaryDirectory()
        let failing = SampleProvider(nil)
        let cache = try ImageTableCache(directory: directory.url, formats: photoFormats, sourceProvider: failing)
        await #expect(throws: ImageTableError.sourceFailed(format: "thumb", reason: "ProviderFailure()")) {
            try await cache.image(for: Photo(1), formatName: "thumb")
        }
        #expect(failing.failed.withLock { $0.count } == 1)

        let corrupt = SampleProvider(.encoded(try sampleData("chelsea-cat.jpg").prefix(600)))
        let other = try ImageTableCache(directory: try TemporaryDirectory().url, formats: photoFormats, sourceProvider: corrupt)
        await #expect {
            try await other.image(for: Photo(1), formatName: "thumb")
        } throws: { error in
            guard case .decodingFailed(format: "thumb", error: _) = error as? ImageTableError else { return false }
            return true
        }
        #expect(try !other.imageExists(for: Photo(1), formatName: "thumb"))
        #expect(corrupt.failed.withLock { $0.count } == 1)
    }

    @Test func withoutAProviderFileURLsAreRead() async throws {
        let directory = try TemporaryDirectory()
        let cache = try ImageTableCache(directory: directory.url, formats: photoFormats)
        let photo = Photo(1, file: sampleURL("rocket-launchpad.jpg"))
        let image = try await cache.image(for: photo, formatName: "thumb")
        #expect(max(image.width, image.height) == 128)
        await #expect(throws: ImageTableError.noSource(format: "thumb")) { try await cache.image(for: Photo(2), formatName: "thumb") }
        let missingFile = Photo(3, file: directory.child("nothing.jpg"))
        await #expect {
            try await cache.image(for: missingFile, formatName: "thumb")
        } throws: { error in
            guard case .sourceFailed(format: "thumb", reason: _) = error as? ImageTableError else { return false }
            return true
        }
    }

    @Test func existsDeleteAndReset() async throws {
        let directory = try TemporaryDirectory()
        let formats = photoFormats + [ImageFormat(name: "large", family: "big", width: 400, height: 400, maximumCount: 3, storage: .diskCache)]
        let cache = try ImageTableCache(directory: directory.url, formats: formats)
        for number: UInt64 in 1...2 {
            try await cache.setImage(.bitmap(pattern(number, width: 500, height: 300)), for: Photo(number), formatName: "thumb", processingFamily: true)
            try await cache.setImage(.bitmap(pattern(number, width: 500, height: 300)), for: Photo(number), formatName: "large")
        }
        #expect(try cache.imageExists(for: Photo(1), formatName: "square"))
        try cache.deleteImage(for: Photo(1), formatName: "square")
        #expect(try !cache.imageExists(for: Photo(1), formatName: "square"))
        #expect(try cache.imageExists(for: Photo(1), formatName: "thumb"))
        try cache.deleteImages(for: Photo(1))
        for format in formats { #expect(try !cache.imageExists(for: Photo(1), formatName: format.name)) }
        #expect(try cache.imageExists(for: Photo(2), formatName: "large"))
        try cache.reset()
        for format in formats { #expect(try !cache.imageExists(for: Photo(2), formatName: format.name)) }
    }

    @Test func diskCacheFormatsKeepNoTable() async throws {
        let directory = try TemporaryDirectory()
        let large = ImageFormat(name: "large", width: 400, height: 400, maximumCount: 3, storage: .diskCache)
        let cache = try ImageTableCache(directory: directory.url, formats: [large])
        #expect(cache.table(forFormat: "large") == nil)
        let source = pattern(1, width: 800, height: 500)
        try await cache.setImage(.bitmap(source), for: Photo(1), formatName: "large")
        let image = try #require(try cache.cachedImage(for: Photo(1), formatName: "large"))
        #expect(!image.isBorrowed)
        #expect(image.hasSamePixels(as: try large.process(source)))
        #expect(try await cache.image(for: Photo(1), formatName: "large").hasSamePixels(as: image))
        #expect(!FileManager.default.fileExists(atPath: directory.child("large.imagetable").path))
        #expect(try cache.cachedImage(for: Photo(1, source: 5), formatName: "large") == nil, "another source image")
    }

    @Test func entitiesMayDrawTheirOwnEntries() async throws {
        let directory = try TemporaryDirectory()
        let cache = try ImageTableCache(directory: directory.url, formats: photoFormats)
        let drawn = pattern(9, width: 50, height: 40)
        let photo = Photo(1) { _, format in format.name == "thumb" ? drawn : nil }
        try await cache.setImage(.bitmap(pattern(1, width: 200, height: 200)), for: photo, formatName: "thumb", processingFamily: true)
        #expect(try #require(try cache.cachedImage(for: photo, formatName: "thumb")).hasSamePixels(as: drawn))
        #expect(try #require(try cache.cachedImage(for: photo, formatName: "square")).width == 96, "other formats processed normally")
        let oversized = Photo(2) { _, _ in pattern(9, width: 500, height: 10) }
        await #expect(throws: ImageTableError.imageDoesNotFit(width: 500, height: 10, format: "thumb")) {
            try await cache.setImage(.bitmap(pattern(1, width: 200, height: 200)), for: oversized, formatName: "thumb")
        }
    }

    @Test func aNewSourceImageMakesTheEntryStale() async throws {
        let directory = try TemporaryDirectory()
        let provider = SampleProvider(.bitmap(pattern(1, width: 300, height: 300)))
        let cache = try ImageTableCache(directory: directory.url, formats: photoFormats, sourceProvider: provider)
        _ = try await cache.image(for: Photo(1, source: 10), formatName: "thumb")
        #expect(try cache.cachedImage(for: Photo(1, source: 10), formatName: "thumb") != nil)
        #expect(try cache.cachedImage(for: Photo(1, source: 11), formatName: "thumb") == nil)
        _ = try await cache.image(for: Photo(1, source: 11), formatName: "thumb")
        #expect(provider.calls.withLock { $0 } == 2)
        #expect(try cache.cachedImage(for: Photo(1, source: 11), formatName: "thumb") != nil)
        #expect(cache.table(forFormat: "thumb")?.count == 1, "the new entry replaced the old one")
    }
}
