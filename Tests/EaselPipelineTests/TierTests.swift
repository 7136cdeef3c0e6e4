import EaselSupport
import EaselCodecs
@testable import EaselPipeline
import EaselStorage
import EaselTestSupport
import Foundation
import Testing

/// A second tier of encoded answers, as a shared store would be: bytes by key in this process's
/// memory (a real store, not a mock: it keeps what it is given and answers from it).
final class SharedMemoryStore: DataStore {
    let storeName = "shared-memory"
    private let values = Locked<[String: Data]>([:])
    private let reads = Locked(0)

    func data(forKey key: String) async throws -> Data? {
        reads.withLock { $0 += 1 }
        return values.withLock { $0[key] }
    }
    func set(_ data: Data, forKey key: String, expiresAt: Date?) async throws { values.withLock { $0[key] = data } }
    func removeValue(forKey key: String) async throws { values.withLock { $0[key] = nil } }
    func removeValues(withKeyPrefix prefix: String) async throws {
        values.withLock { values in values = values.filter { !$0.key.hasPrefix(prefix) } }
    }
    var keys: [String] { values.withLock { Array($0.keys) } }
}

let cupJPEG = try! Data(contentsOf: sampleURL("coffee-cup.jpg"))

/// Polls (yielding, bounded by the suite's time limit) until `condition` holds.
func eventually(_ condition: () -> Bool) async {
    while !condition() { await Task.yield() }
}

@Suite("Tiers and purge", .timeLimit(.minutes(1)))
struct TierTests {
    let thumbnail = ImageRequest.Processing.processors([Resize(width: 48, height: 48, mode: .fit)])

    func request(_ url: URL, _ processing: ImageRequest.Processing, _ format: ImageEncoding.Format = .jpeg) -> ImageRequest {
        var request = ImageRequest(url: url, processing: processing)
        request.encoding = ImageEncoding(format, quality: 80)
        return request
    }

    @Test func aSharedStoreAnswersAnotherPipelineBeforeItsOriginAndIsPurgedWithTheSource() async throws {
        let origin = Origin()
        origin.serve("/cat.jpg", .file(catJPEG))
        let shared = SharedMemoryStore()
        try await origin.run { base in
            let url = base.appendingPathComponent("cat.jpg")
            let first = try TemporaryDirectory(), second = try TemporaryDirectory()
            let a = try ImagePipeline(configuration: configured(.init(formats: testFormats, cacheDirectory: first.url, downloadRate: nil)) {
                $0.sharedStores = [shared]
            })
            let made = try await a.encodedImage(for: request(url, thumbnail))
            #expect(made.tier == .network)
            // The shared copy is written after the answer.
            await a.waitForBackgroundWork()
            #expect(shared.keys.count == 1)
            #expect(shared.keys.allSatisfy { $0.hasPrefix(StoreKey.prefix(url.absoluteString)) })

            // Another machine: its own disk, the same shared store. No origin request, no decode.
            let b = try ImagePipeline(configuration: configured(.init(formats: testFormats, cacheDirectory: second.url, downloadRate: nil)) {
                $0.sharedStores = [shared]
            })
            let fromShared = try await b.encodedImage(for: request(url, thumbnail))
            #expect(fromShared.tier == .encodedShared)
            #expect(fromShared.encoded.data == made.encoded.data && fromShared.encoded.etag == made.encoded.etag)
            #expect(origin.count("/cat.jpg") == 1 && b.counters.decodes == 0 && b.counters.fetches == 0)
            // It copied the answer to its own disk on the way: a restart answers from there.
            await b.close()
            let c = try ImagePipeline(configuration: .init(formats: testFormats, cacheDirectory: second.url, downloadRate: nil))
            #expect(try await c.encodedImage(for: request(url, thumbnail)).tier == .encodedDisk)
            await c.close()

            // A purge on one machine empties the shared store and its own tiers.
            try await a.purge(ImageRequest(url: url))
            #expect(shared.keys.isEmpty)
            #expect(a.cachedEncodedImage(for: request(url, thumbnail)) == nil)
            #expect(try await a.disk!.statistics().entryCount == 0)
            #expect(try await a.encodedImage(for: request(url, thumbnail)).tier == .network)
            #expect(origin.count("/cat.jpg") == 2)
            await a.close()
        }
    }

    @Test func workThatRacedAPurgeKeepsNothingAndLaterRequestsStartAfresh() async throws {
        let origin = Origin()
        origin.serve("/cat.jpg", .file(catJPEG))
        try await origin.run { base in
            let url = base.appendingPathComponent("cat.jpg")
            let directory = try TemporaryDirectory()
            let pipeline = try ImagePipeline(configuration: .init(formats: testFormats, cacheDirectory: directory.url, downloadRate: nil))
            let gate = Gate()
            let encodes = Locked(0)
            pipeline.encodeHook.withLock { $0 = { encodes.withLock { $0 += 1 }; try? await gate.wait() } }
            // An encode is under way (its original is fetched and on disk) when the image changes
            // at the origin and the purge runs.
            let before = Task { try await pipeline.encodedImage(for: request(url, thumbnail)) }
            await eventually { encodes.withLock { $0 } == 1 }
            origin.serve("/cat.jpg", .file(cupJPEG))
            try await pipeline.purge(ImageRequest(url: url))
            // A request after the purge does not join the work that began before it.
            let after = Task { try await pipeline.encodedImage(for: request(url, thumbnail)) }
            await eventually { encodes.withLock { $0 } == 2 }
            #expect(origin.count("/cat.jpg") == 2, "the request after the purge fetched the origin again")
            gate.open()
            let old = try await before.value
            let new = try await after.value
            #expect(old.encoded.etag != new.encoded.etag)
            // Whichever finished last, no tier keeps the old image: memory, then (a restart) disk.
            let again = try await pipeline.encodedImage(for: request(url, thumbnail))
            #expect(again.encoded.etag == new.encoded.etag, "answered by \(again.tier)")
            // The answer just given is in the memory tier, and it is the new image's.
            let cached = try #require(pipeline.cachedEncodedImage(for: request(url, thumbnail)), "the memory tier holds the answer")
            #expect(cached.etag == new.encoded.etag)
            await pipeline.close()
            let restarted = try ImagePipeline(configuration: .init(formats: testFormats, cacheDirectory: directory.url, downloadRate: nil))
            #expect(try await restarted.encodedImage(for: request(url, thumbnail, .jpeg)).encoded.etag == new.encoded.etag)
            #expect(origin.count("/cat.jpg") <= 3)
            await restarted.close()
        }
    }

    /// The pipeline prepares a watermark once per source and forgets it with the source's purge;
    /// an answer made with a mark whose source a purge reached while it was being made is
    /// answered but not kept (it may show the purged image).
    @Test func anAnswerMadeWithAMarkPurgedMeanwhileIsNotKept() async throws {
        let root = try TemporaryDirectory()
        try catJPEG.write(to: root.child("cat.jpg"))
        try cupPNG.write(to: root.child("mark.png"))
        let cache = try TemporaryDirectory()
        let pipeline = try ImagePipeline(configuration: .init(formats: testFormats, cacheDirectory: cache.url,
                                                              fetchers: [FileFetcher(root: root.url)], downloadRate: nil))
        let markRequest = ImageRequest(url: root.child("mark.png"))
        let mark = try await pipeline.watermark(for: markRequest, maxSide: 2048)
        #expect(mark.image.pixelFormat == .rgba8 && mark.sourceKey == markRequest.sourceKey)
        let decodes = pipeline.decodeCount
        #expect(try await pipeline.watermark(for: markRequest, maxSide: 2048).identifier == mark.identifier)
        #expect(pipeline.decodeCount == decodes, "prepared once")
        do {
            _ = try await pipeline.watermark(for: markRequest, maxSide: 16)
            Issue.record("a mark over the side limit was prepared")
        } catch .decoding(.sideTooLong) {
        } catch {
            Issue.record("\(error)")
        }
        func marked(_ mark: PreparedWatermark) -> ImageRequest {
            var request = request(root.child("cat.jpg"), .processors([Resize(width: 64, height: 64, mode: .fit),
                                                                      try! Watermark(mark: mark.image, markIdentifier: mark.identifier)]))
            request.madeWith = [mark]
            return request
        }
        let gate = Gate()
        let encodes = Locked(0)
        pipeline.encodeHook.withLock { $0 = { encodes.withLock { $0 += 1 }; try? await gate.wait() } }
        let during = Task { try await pipeline.encodedImage(for: marked(mark)) }
        await eventually { encodes.withLock { $0 } == 1 }
        // The mark's image changes and its purge runs while the answer is being made.
        try catJPEG.write(to: root.child("mark.png"))
        try await pipeline.purge(markRequest)
        gate.open()
        let answer = try await during.value
        #expect(!answer.isInMemoryTier && pipeline.encodedMemoryCount == 0, "made with a purged mark: not kept")
        #expect(pipeline.cachedEncodedImage(for: marked(mark)) == nil)
        // The purge forgot the prepared mark: the next one is the new image's.
        let replaced = try await pipeline.watermark(for: markRequest, maxSide: 2048)
        #expect(replaced.identifier != mark.identifier)
        let after = try await pipeline.encodedImage(for: marked(replaced))
        #expect(after.isInMemoryTier && pipeline.encodedMemoryCount == 1)
        // A purge of another source that shares the mark's purge slot: the prepared mark is
        // prepared again under a current mark, and what is made with it is kept as before.
        let slot = pipeline.purges.slot(try #require(markRequest.sourceKey))
        let neighbour = try #require((0..<200_000).lazy.map { "file:///elsewhere/\($0).jpg" }.first { pipeline.purges.slot($0) == slot })
        try await pipeline.purge(ImageRequest(url: URL(fileURLWithPath: "/elsewhere/x.jpg"), cacheKey: neighbour))
        let again = try await pipeline.watermark(for: markRequest, maxSide: 2048)
        #expect(again.identifier == replaced.identifier)
        var other = marked(again)
        other.processing = .processors([Resize(width: 32, height: 32, mode: .fit),
                                        try Watermark(mark: again.image, markIdentifier: again.identifier)])
        #expect(try await pipeline.encodedImage(for: other).isInMemoryTier, "a neighbour's purge does not stop the mark's answers being kept")
        await pipeline.close()
    }

    @Test func anEncodedAnswerNeverStartsFromABitmapDecodedFromALossyDiskVariant() async throws {
        let root = try TemporaryDirectory()
        try catJPEG.write(to: root.child("cat.jpg"))
        let url = root.child("cat.jpg")
        let directory = try TemporaryDirectory()
        let configuration = ImagePipeline.Configuration(formats: testFormats, cacheDirectory: directory.url,
                                                        fetchers: [FileFetcher(root: root.url)], downloadRate: nil)
        let cold = try ImagePipeline(configuration: .init(formats: testFormats, fetchers: [FileFetcher(root: root.url)], downloadRate: nil))
        let expected = try await cold.encodedImage(for: request(url, thumbnail, .png))
        await cold.close()
        do {
            // `image(for:)` stores a disk variant; a restart reads the bitmap back from it.
            let first = try ImagePipeline(configuration: configuration)
            _ = try await first.image(for: ImageRequest(url: url, processing: thumbnail))
            await first.close()
        }
        let second = try ImagePipeline(configuration: configuration)
        #expect(try await second.image(for: ImageRequest(url: url, processing: thumbnail)).tier == .diskVariant)
        #expect(try await second.image(for: ImageRequest(url: url, processing: thumbnail)).tier == .memory)
        let png = try await second.encodedImage(for: request(url, thumbnail, .png))
        #expect(png.tier == .file, "made from the original, not from the variant's bitmap in memory")
        #expect(png.encoded.data == expected.encoded.data && png.encoded.etag == expected.encoded.etag)
        await second.close()
    }

    @Test func aDeadlineCoversTasksAndCountsAsAFailure() async throws {
        let origin = Origin()
        let gate = Gate()
        origin.serve("/slow.jpg", .gated(catJPEG, first: 100, gate: gate))
        try await origin.run { base in
            let pipeline = try ImagePipeline(configuration: .init(formats: testFormats, downloadRate: nil))
            var request = ImageRequest(url: base.appendingPathComponent("slow.jpg"), format: "thumb")
            request.deadline = .milliseconds(200)
            let task = pipeline.task(for: request)
            await expectFailure({ $0 == .timedOut(seconds: 0.2) }) { _ = try await task.response }
            #expect(pipeline.counters.failures == 1 && pipeline.counters.cancellations == 0, "\(pipeline.counters)")
            gate.open()
            await pipeline.close()
        }
    }
}
