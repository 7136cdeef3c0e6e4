import EaselSupport
import EaselCodecs
@testable import EaselPipeline
import EaselStorage
import EaselTables
import EaselTestSupport
import Foundation
import Testing

let testFormats = [
    ImageFormat(name: "thumb", family: "photos", width: 128, height: 128, fit: .fit, maximumCount: 50),
    ImageFormat(name: "square", family: "photos", width: 64, height: 64, fit: .fill, maximumCount: 50),
    ImageFormat(name: "large", family: "large", width: 400, height: 400, maximumCount: 50, storage: .diskCache),
]

let catJPEG = try! Data(contentsOf: sampleURL("chelsea-cat.jpg"))
let cupPNG = try! Data(contentsOf: sampleURL("coffee-cup-cutout.png"))

/// A pipeline over a fresh cache directory, shut down after `body`.
func withPipeline(fetcher: HTTPFetcher.Configuration = .init(), downloads: Int = 6, caching: ImagePipeline.HTTPCaching = .respectHeaders,
                  extraFetchers: [any ImageFetcher] = [],
                  _ body: (ImagePipeline, TemporaryDirectory) async throws -> Void) async throws {
    let directory = try TemporaryDirectory()
    let pipeline = try ImagePipeline(configuration: configured(.init(
        formats: testFormats, cacheDirectory: directory.url, fetchers: [HTTPFetcher(configuration: fetcher)] + extraFetchers,
        downloadRate: nil)) {
        $0.maximumConcurrentDownloads = downloads
        $0.httpCaching = caching
    })
    do {
        try await body(pipeline, directory)
    } catch {
        await pipeline.shutdown()
        throw error
    }
    await pipeline.shutdown()
}

func expectFailure(_ expected: (PipelineError) -> Bool, _ body: () async throws -> Void,
                   sourceLocation: SourceLocation = #_sourceLocation) async {
    do {
        try await body()
        Issue.record("expected an error", sourceLocation: sourceLocation)
    } catch let error as PipelineError {
        #expect(expected(error), "unexpected \(error)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("not a PipelineError: \(error)", sourceLocation: sourceLocation)
    }
}

@Suite struct PipelineTests {
    @Test func aHundredRequestsForOneURLMakeOneOriginRequestAndOneDecode() async throws {
        let origin = Origin()
        let gate = Gate()
        origin.serve("/cat.jpg", .gated(catJPEG, first: 0, gate: gate))
        try await origin.run { base in
            try await withPipeline { pipeline, _ in
                let url = base.appendingPathComponent("cat.jpg")
                try await withThrowingTaskGroup(of: ImageResponse.self) { group in
                    for index in 0..<100 {
                        group.addTask { try await pipeline.image(for: ImageRequest(url: url, format: index % 2 == 0 ? "thumb" : "square")) }
                    }
                    _ = await origin.nextRequest()
                    gate.open()
                    var count = 0
                    for try await response in group {
                        #expect(response.image.width <= 128)
                        count += 1
                    }
                    #expect(count == 100)
                }
                #expect(origin.count("/cat.jpg") == 1)
                // One decode per format, each at its own scale (thumb needs 1/2, square 1/4):
                // every thumb request shares one, every square request the other.
                #expect(pipeline.decodeCount == 2)
                // The next requests hit the table.
                let again = try await pipeline.image(for: ImageRequest(url: url, format: "square"))
                #expect(again.tier == .table)
                #expect(again.image.width == 64 && again.image.height == 64)
            }
        }
    }

    /// Until exactly `count` requesters wait for decodes (one each; bounded: 10 s).
    static func waitForRequesters(_ count: Int, of pipeline: ImagePipeline) async throws {
        let by = ContinuousClock.now + .seconds(10)
        while pipeline.tasks.decodes.waiterCount != count, ContinuousClock.now < by { await Task.yield() }
        try #require(pipeline.tasks.decodes.waiterCount == count, "\(pipeline.tasks.decodes.waiterCount) requesters wait, not \(count)")
    }

    @Test func cancellingOneOfTwoRequestersKeepsTheWorkAndBothStopsTheDownload() async throws {
        let origin = Origin()
        let gate = Gate(), gate2 = Gate()
        origin.serve("/a.jpg", .gated(catJPEG, first: 1000, gate: gate))
        origin.serve("/b.jpg", .gated(catJPEG, first: 1000, gate: gate2))
        try await origin.run { base in
            try await withPipeline { pipeline, _ in
                let a = ImageRequest(url: base.appendingPathComponent("a.jpg"), format: "thumb")
                let first = pipeline.task(for: a), second = pipeline.task(for: a)
                _ = await origin.nextRequest()
                // Both requesters have joined the one decode (else the first leaving alone would
                // stop the download, and the second start another).
                try await Self.waitForRequesters(2, of: pipeline)
                first.cancel()
                await expectFailure({ $0 == .cancelled }) { _ = try await first.response }
                gate.open()
                let response = try await second.response
                #expect(response.tier == .network)
                #expect(origin.count("/a.jpg") == 1)

                let b = ImageRequest(url: base.appendingPathComponent("b.jpg"), format: "thumb")
                let events = pipeline.events()
                // (The first pair's requesters gone from the decodes first: a requester's key
                // is dropped after its answer, so the count is read once it is back to none.)
                try await Self.waitForRequesters(0, of: pipeline)
                let third = pipeline.task(for: b), fourth = pipeline.task(for: b)
                _ = await origin.nextRequest()
                try await Self.waitForRequesters(2, of: pipeline)
                third.cancel()
                fourth.cancel()
                await expectFailure({ $0 == .cancelled }) { _ = try await third.response }
                await expectFailure({ $0 == .cancelled }) { _ = try await fourth.response }
                // The download ends, cancelled, while the origin still holds back the rest of the body.
                var ended: PipelineError?
                for await event in events {
                    if case .downloadEnded(let url, _, let error) = event, url == b.url { ended = error; break }
                }
                #expect(ended == .cancelled)
                gate2.open()
                #expect(origin.count("/b.jpg") == 1)
            }
        }
    }

    @Test func laterRequestsStartFirstAmongEqualPriorities() async throws {
        let origin = Origin()
        let gate = Gate()
        origin.serve("/busy.jpg", .gated(catJPEG, first: 0, gate: gate))
        for name in ["a", "b", "c", "d"] { origin.serve("/\(name).jpg", .file(catJPEG)) }
        try await origin.run { base in
            try await withPipeline(downloads: 1) { pipeline, _ in
                let busy = pipeline.task(for: ImageRequest(url: base.appendingPathComponent("busy.jpg"), format: "thumb"))
                _ = await origin.nextRequest()
                var tasks: [ImageTask] = []
                for (index, name) in ["a", "b", "c", "d"].enumerated() {
                    tasks.append(pipeline.task(for: ImageRequest(url: base.appendingPathComponent("\(name).jpg"), format: "thumb")))
                    while pipeline.waitingDownloads < index + 1 { await Task.yield() }
                }
                // Raised while waiting: b goes first.
                tasks[1].setPriority(.high)
                gate.open()
                _ = try await busy.response
                for task in tasks { _ = try await task.response }
                #expect(origin.all.map(\.path) == ["/busy.jpg", "/b.jpg", "/d.jpg", "/c.jpg", "/a.jpg"])
            }
        }
    }

    @Test func downloadsStayWithinTheirLimits() async throws {
        let origin = Origin()
        origin.serve("/huge", .zeros(count: 50_000_000, declareLength: false))
        origin.serve("/declared", .zeros(count: 50_000_000, declareLength: true))
        origin.serve("/slow", .trickle(interval: .seconds(1)))
        for hop in 1...6 { origin.serve("/hop\(hop)", .redirect("/hop\(hop - 1)")) }
        origin.serve("/hop0", .file(catJPEG))
        try await origin.run { base in
            try await withPipeline(fetcher: .init(deadline: .seconds(1))) { pipeline, _ in
                await expectFailure({ $0 == .timedOut(seconds: 1) }) {
                    _ = try await pipeline.image(for: ImageRequest(url: base.appendingPathComponent("slow")))
                }
            }
            try await withPipeline(fetcher: .init(deadline: .seconds(60))) { pipeline, _ in
                let limit = 20_000_000
                await expectFailure({ error in
                    guard case .tooLarge(limit, let received, nil) = error else { return false }
                    return received > limit && received <= limit + 1 << 20
                }) { _ = try await pipeline.image(for: ImageRequest(url: base.appendingPathComponent("huge"))) }

                await expectFailure({ $0 == .tooLarge(limit: limit, received: 0, declared: 50_000_000) }) {
                    _ = try await pipeline.image(for: ImageRequest(url: base.appendingPathComponent("declared")))
                }
                await expectFailure({ $0 == .tooManyRedirects(limit: 5) }) {
                    _ = try await pipeline.image(for: ImageRequest(url: base.appendingPathComponent("hop6")))
                }
                let fiveHops = try await pipeline.image(for: ImageRequest(url: base.appendingPathComponent("hop5")))
                #expect(fiveHops.image.width == 451)
            }
        }
    }

    @Test func compressedBodiesAreCountedAfterDecompression() async throws {
        // 30 MB of zeros, gzipped to about 30 KB: the limit applies to what it inflates to.
        let gzip = Process()
        gzip.executableURL = URL(fileURLWithPath: "/bin/sh")
        gzip.arguments = ["-c", "head -c 30000000 /dev/zero | gzip -c"]
        let pipe = ChildProcesses.pipe()
        gzip.standardOutput = pipe
        try ChildProcesses.run(gzip)
        let compressed = try await BlockingIOPool.shared.run { pipe.fileHandleForReading.readDataToEndOfFile() }
        gzip.waitUntilExit()
        #expect(compressed.count < 100_000)
        let origin = Origin()
        origin.serve("/bomb", .file(compressed, headers: ["Content-Encoding": "gzip"]))
        try await origin.run { base in
            try await withPipeline { pipeline, _ in
                await expectFailure({ error in
                    guard case .tooLarge(20_000_000, let received, nil) = error else { return false }
                    return received <= 20_000_000 + 1 << 20
                }) { _ = try await pipeline.image(for: ImageRequest(url: base.appendingPathComponent("bomb"))) }
            }
        }
    }

    @Test func errorsAreTypedAndNothingIsCached() async throws {
        let origin = Origin()
        origin.serve("/missing", .status(404))
        origin.serve("/broken", .status(500))
        origin.serve("/corrupt.jpg", .file(catJPEG.prefix(2000)))
        origin.serve("/text", .file(Data("hello".utf8)))
        try await origin.run { base in
            try await withPipeline { pipeline, _ in
                for (path, code) in [("missing", 404), ("broken", 500)] {
                    let url = base.appendingPathComponent(path)
                    await expectFailure({ $0 == .httpStatus(code, url: url.absoluteString) }) {
                        _ = try await pipeline.image(for: ImageRequest(url: url))
                    }
                }
                for path in ["corrupt.jpg", "text"] {
                    let url = base.appendingPathComponent(path)
                    await expectFailure({ if case .decoding = $0 { true } else { false } }) {
                        _ = try await pipeline.image(for: ImageRequest(url: url, format: "thumb"))
                    }
                }
                for path in ["missing", "broken", "corrupt.jpg", "text"] {
                    await expectFailure({ $0 == .notCached }) {
                        _ = try await pipeline.image(for: ImageRequest(url: base.appendingPathComponent(path), cachePolicy: .cacheOnly))
                    }
                }
                #expect(pipeline.disk?.count == 0, "nothing was stored")
                await expectFailure({ $0 == .unknownFormat("nope") }) {
                    _ = try await pipeline.image(for: ImageRequest(url: base.appendingPathComponent("x"), format: "nope"))
                }
                await expectFailure({ $0 == .unsupportedURL("ftp://example.com/a.jpg") }) {
                    _ = try await pipeline.image(for: ImageRequest(url: URL(string: "ftp://example.com/a.jpg")!))
                }
            }
        }
    }

    @Test func httpCachingHeadersAreHonoured() async throws {
        let origin = Origin()
        origin.serve("/fresh.jpg", .file(catJPEG, headers: ["Cache-Control": "max-age=600"]))
        origin.serve("/stale.jpg", .file(catJPEG, headers: ["Cache-Control": "max-age=0", "ETag": "\"v1\""]))
        origin.serve("/nostore.jpg", .file(catJPEG, headers: ["Cache-Control": "no-store"]))
        try await origin.run { base in
            try await withPipeline { pipeline, _ in
                // Within max-age: another processing of the same original is served from disk.
                let fresh = base.appendingPathComponent("fresh.jpg")
                #expect(try await pipeline.image(for: ImageRequest(url: fresh, format: "thumb")).tier == .network)
                #expect(try await pipeline.image(for: ImageRequest(url: fresh, format: "large")).tier == .diskOriginal)
                #expect(origin.count("/fresh.jpg") == 1)

                // Stale: revalidated with the ETag; the 304 is a hit on the stored original.
                let stale = base.appendingPathComponent("stale.jpg")
                #expect(try await pipeline.image(for: ImageRequest(url: stale, format: "thumb")).tier == .network)
                let revalidated = try await pipeline.image(for: ImageRequest(url: stale, format: "large"))
                #expect(revalidated.tier == .diskOriginal)
                #expect(origin.all.filter { $0.path == "/stale.jpg" }.map(\.ifNoneMatch) == [nil, "\"v1\""])

                // no-store: never written, fetched again every time.
                let noStore = base.appendingPathComponent("nostore.jpg")
                #expect(try await pipeline.image(for: ImageRequest(url: noStore)).tier == .network)
                #expect(try await pipeline.image(for: ImageRequest(url: noStore)).tier == .network)
                #expect(origin.count("/nostore.jpg") == 2)
                let key = ImageRequest(url: noStore).sourceKey!
                #expect(try await pipeline.disk?.data(forKey: "original|" + key) == nil)
            }
            // Aggressive caching ignores the headers.
            try await withPipeline(caching: .aggressive) { (pipeline: ImagePipeline, _: TemporaryDirectory) async throws in
                let noStore = base.appendingPathComponent("nostore.jpg")
                #expect(try await pipeline.image(for: ImageRequest(url: noStore)).tier == .network)
                #expect(try await pipeline.image(for: ImageRequest(url: noStore, format: "large")).tier == .diskOriginal)
            }
        }
    }

    @Test func aSuspendedDownloadResumesWithARangeRequestByteExact() async throws {
        let origin = Origin()
        let gate = Gate()
        origin.serve("/big.png", .gated(cupPNG, first: cupPNG.count / 2, gate: gate, etag: "\"cup\""))
        try await origin.run { base in
            try await withPipeline { pipeline, _ in
                let request = ImageRequest(url: base.appendingPathComponent("big.png"))
                let half = cupPNG.count / 2
                let progress = pipeline.events()
                let task = pipeline.task(for: request)
                for await event in progress {
                    if case .progress(_, let received, _) = event, received >= half { break }
                }
                pipeline.suspendDownload(for: request)
                pipeline.resumeDownload(for: request)
                let response = try await task.response
                gate.open()
                let requests = origin.all.filter { $0.path == "/big.png" }
                #expect(requests.count == 2)
                #expect(requests.last?.range == "bytes=\(half)-")
                #expect(requests.last?.ifRange == "\"cup\"")
                #expect(response.image.hasSamePixels(as: try ImageDecoder.decode(cupPNG)), "byte-exact original")
            }
        }
    }

    @Test func signedURLsShareOneCacheKey() async throws {
        let origin = Origin()
        origin.serve("/signed.jpg", .file(catJPEG, headers: ["Cache-Control": "max-age=600"]))
        try await origin.run { base in
            try await withPipeline { pipeline, _ in
                let ignored: Set<String> = ["Signature", "Expires"]
                for signature in ["abc", "def"] {
                    var components = URLComponents(url: base.appendingPathComponent("signed.jpg"), resolvingAgainstBaseURL: false)!
                    components.queryItems = [URLQueryItem(name: "v", value: "1"), URLQueryItem(name: "Signature", value: signature),
                                             URLQueryItem(name: "expires", value: signature)]
                    let request = ImageRequest(url: components.url!, ignoredQueryItems: ignored)
                    #expect(request.sourceKey == base.appendingPathComponent("signed.jpg").absoluteString + "?v=1")
                    _ = try await pipeline.image(for: request)
                }
                #expect(origin.count("/signed.jpg") == 1)
            }
        }
    }

    @Test func eventsReportEachRequestAndTheTierThatAnswered() async throws {
        let origin = Origin()
        origin.serve("/cat.jpg", .file(catJPEG))
        try await origin.run { base in
            try await withPipeline { pipeline, _ in
                let log = Locked<[String]>([])
                let token = pipeline.addObserver { event in
                    switch event {
                    case .started: log.withLock { $0.append("started") }
                    case .finished(_, let tier, _): log.withLock { $0.append("finished \(tier)") }
                    case .failed: log.withLock { $0.append("failed") }
                    case .cancelled: log.withLock { $0.append("cancelled") }
                    case .progress, .downloadStarted, .downloadEnded: break
                    }
                }
                let request = ImageRequest(url: base.appendingPathComponent("cat.jpg"), processing: .processors([Resize(width: 50, height: 50)]))
                _ = try await pipeline.image(for: request)
                _ = try await pipeline.image(for: request)
                await expectFailure({ $0 == .httpStatus(404, url: base.appendingPathComponent("nothing").absoluteString) }) {
                    _ = try await pipeline.image(for: ImageRequest(url: base.appendingPathComponent("nothing")))
                }
                pipeline.removeObserver(token)
                #expect(log.withLock { $0 } == ["started", "finished network", "started", "finished memory", "started", "failed"])
            }
        }
    }

    @Test func prefetchingFillsTheCachesAndCanBeCancelled() async throws {
        let origin = Origin()
        origin.serve("/one.jpg", .file(catJPEG))
        origin.serve("/two.jpg", .file(catJPEG))
        try await origin.run { base in
            try await withPipeline { pipeline, _ in
                let requests = ["one", "two"].map { ImageRequest(url: base.appendingPathComponent("\($0).jpg"), format: "large") }
                let prefetch = pipeline.prefetch(requests)
                #expect(prefetch.tasks.allSatisfy { $0.request.priority == .low })
                #expect(await prefetch.wait().isEmpty)
                for request in requests {
                    let response = try await pipeline.image(for: request)
                    #expect(response.tier == .memory)
                }
                let cancelled = pipeline.prefetch([ImageRequest(url: base.appendingPathComponent("three.jpg"))])
                cancelled.cancel()
                #expect(await cancelled.wait().allSatisfy { $0.1 == .cancelled || $0.1 == .httpStatus(404, url: base.appendingPathComponent("three.jpg").absoluteString) })
            }
        }
    }

    @Test func theTierThatAnswersFollowsTheCaches() async throws {
        let origin = Origin()
        origin.serve("/cat.jpg", .file(catJPEG))
        try await origin.run { base in
            let directory = try TemporaryDirectory()
            let configuration = ImagePipeline.Configuration(formats: testFormats, cacheDirectory: directory.url, downloadRate: nil)
            let url = base.appendingPathComponent("cat.jpg")
            do {
                let pipeline = try ImagePipeline(configuration: configuration)
                #expect(try await pipeline.image(for: ImageRequest(url: url, format: "large")).tier == .network)
                #expect(try await pipeline.image(for: ImageRequest(url: url, format: "large")).tier == .memory)
                #expect(try await pipeline.image(for: ImageRequest(url: url, format: "thumb")).tier == .diskOriginal)
                #expect(try await pipeline.image(for: ImageRequest(url: url, format: "thumb")).tier == .table)
                #expect(try await pipeline.image(for: ImageRequest(url: url, format: "large", cachePolicy: .reload)).tier == .network)
                // Closed, not just dropped: its tables' locks are released before this returns
                // (a dropped pipeline's background work may hold a table a while longer).
                await pipeline.close()
            }
            // A new process: memory is empty, the disk and tables are not.
            let pipeline = try ImagePipeline(configuration: configuration)
            #expect(try await pipeline.image(for: ImageRequest(url: url, format: "large")).tier == .diskVariant)
            #expect(try await pipeline.image(for: ImageRequest(url: url, format: "thumb")).tier == .table)
            #expect(try await pipeline.image(for: ImageRequest(url: url, format: "thumb", cachePolicy: .cacheOnly)).tier == .table)
            await pipeline.shutdown()
            #expect(origin.count("/cat.jpg") == 2)
        }
    }

    /// A page other than the first has its own identity in every tier: a table format keeps its
    /// first page in the table and other pages in memory and on disk, and no tier answers one
    /// page for another, before or after a restart.
    @Test func eachPageHasItsOwnIdentityInEveryTier() async throws {
        let directory = try TemporaryDirectory()
        let root = try TemporaryDirectory()
        // Page 0: 200×100 points, red; page 1: 100×200, blue.
        try twoPagePDF().write(to: root.child("doc.pdf"))
        let configuration = ImagePipeline.Configuration(formats: testFormats, cacheDirectory: directory.url,
                                                        fetchers: [FileFetcher(root: root.url)], downloadRate: nil)
        func request(page: Int) -> ImageRequest {
            var request = ImageRequest(url: root.child("doc.pdf"), format: "thumb")
            request.page = page
            return request
        }
        func check(_ response: ImageResponse, page: Int, tier: ImageTier) {
            let (width, height, channel) = page == 0 ? (128, 64, 0) : (64, 128, 2)
            #expect(response.tier == tier && response.image.width == width && response.image.height == height, "page \(page) from \(response.tier)")
            #expect(response.image.pixel(x: 10, y: 10)[channel] > 240 && response.image.pixel(x: 10, y: 10)[2 - channel] < 15, "page \(page)")
        }
        do {
            let pipeline = try ImagePipeline(configuration: configuration)
            check(try await pipeline.image(for: request(page: 0)), page: 0, tier: .file)
            check(try await pipeline.image(for: request(page: 1)), page: 1, tier: .file)  // (local files are not copied)
            check(try await pipeline.image(for: request(page: 0)), page: 0, tier: .table)
            check(try await pipeline.image(for: request(page: 1)), page: 1, tier: .memory)
            await #expect(throws: PipelineError.decoding(.noSuchPage(page: 2, pages: 2))) { try await pipeline.image(for: request(page: 2)) }
            await pipeline.close()
        }
        let pipeline = try ImagePipeline(configuration: configuration)
        check(try await pipeline.image(for: request(page: 1)), page: 1, tier: .diskVariant)
        check(try await pipeline.image(for: request(page: 0)), page: 0, tier: .table)
        await pipeline.close()
    }

    @Test func aClosedPipelineReleasesItsTablesSoTheDirectoryReopensAtOnce() async throws {
        let directory = try TemporaryDirectory()
        let root = try TemporaryDirectory()
        try catJPEG.write(to: root.child("cat.jpg"))
        let configuration = ImagePipeline.Configuration(formats: testFormats, cacheDirectory: directory.url,
                                                        fetchers: [FileFetcher(root: root.url)], downloadRate: nil)
        let first = try ImagePipeline(configuration: configuration)
        let response = try await first.image(for: ImageRequest(url: root.child("cat.jpg"), format: "square"))
        #expect(response.tier == .file, "a local file answers as its own tier")
        // A second pipeline on the same directory while the first is open: a typed error.
        #expect { _ = try ImagePipeline(configuration: configuration) } throws: { error in
            guard case .storage(.imageTable(.inUseByAnotherProcess)) = error as? PipelineError else { return false }
            return true
        }
        await first.close()
        let second = try ImagePipeline(configuration: configuration)
        #expect(try await second.image(for: ImageRequest(url: root.child("cat.jpg"), format: "square")).tier == .table)
        await second.close()
    }

    @Test func countersSayWhatThePipelineDidWithoutAMetricsBackend() async throws {
        let directory = try TemporaryDirectory()
        let root = try TemporaryDirectory()
        try catJPEG.write(to: root.child("cat.jpg"))
        let pipeline = try ImagePipeline(configuration: .init(formats: testFormats, cacheDirectory: directory.url,
                                                              fetchers: [FileFetcher(root: root.url)], downloadRate: nil))
        var request = ImageRequest(url: root.child("cat.jpg"), processing: .processors([Resize(width: 40, height: 40, mode: .fit)]))
        request.encoding = ImageEncoding(.webp, quality: 70)
        let first = try await pipeline.encodedImage(for: request)
        let second = try await pipeline.encodedImage(for: request)
        #expect(first.tier == .file && second.tier == .encodedMemory)
        #expect(first.encoded.etag == second.encoded.etag && first.encoded.contentType == "image/webp")
        let counters = pipeline.counters
        #expect(counters.fetches == 1 && counters.decodes == 1 && counters.encodes == 1, "\(counters)")
        #expect(counters.answers == [.file: 1, .encodedMemory: 1], "\(counters)")
        await pipeline.close()
    }
}
