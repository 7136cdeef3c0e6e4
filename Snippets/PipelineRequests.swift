// Requests through an image pipeline: named formats and processors, priorities, deadlines and
// cache policies, tasks, prefetching, events, encoded and negotiated answers, purges; then S3
// as a source and as a shared tier. Run it from the repository root: the sources are the bundled
// `Samples/`; the S3 part runs only when AWS credentials are in the environment.

import Easel
import Foundation

// snippet.hide
let cacheDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("easel-pipeline-requests")
// snippet.show

// snippet.hide
// The examples run inside an async function: top-level code would pick the synchronous forms of
// calls that have both.
func pipelineRequests() async throws {
// snippet.show
    // snippet.configure
    let root = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("Samples")
    var configuration = ImagePipeline.Configuration(
        cacheDirectory: cacheDirectory,                    // disk cache and image tables; nil: memory only
        fetchers: [FileFetcher(root: root), HTTPFetcher()])  // tried in order: the first that can fetch the URL
    configuration.maximumConcurrentDownloads = 6
    configuration.newestFirst = true                        // among equal priorities, the latest request first
    let pipeline = try ImagePipeline(configuration: configuration)
    // snippet.end

    // snippet.observe
    let token = pipeline.addObserver { event in
        switch event {
        case .finished(let id, let tier, let seconds): print("request \(id): \(tier) in \(seconds) s")
        case .failed(let id, let error): print("request \(id) failed: \(error)")
        default: break
        }
    }
    // snippet.end

    // snippet.request
    let photo = root.appendingPathComponent("chelsea-cat.jpg")
    var request = ImageRequest(url: photo, format: "thumb", priority: .high)
    request.deadline = .seconds(5)                          // waiting, fetching, decoding, processing
    let first = try await pipeline.image(for: request)      // file: a read, a decode, a resize
    let again = try await pipeline.image(for: request)      // table: thumb is kept in an image table
    print("\(first.tier), then \(again.tier)")
    // snippet.end

    // snippet.processors
    let adHoc = ImageRequest(url: photo, processing: .processors([
        Resize(width: 300, height: 200, mode: .fill, gravity: .smart(.attention)),
        try Sharpen(sigma: 0.5),
    ]))
    let cropped = try await pipeline.image(for: adHoc)
    print("ad hoc: \(cropped.image.width)×\(cropped.image.height)")

    // Signed URLs whose signature changes while the image does not share one cache key.
    let signed = ImageRequest(url: URL(string: "https://images.example.com/a.jpg?X-Amz-Signature=abc&v=2")!,
                              processing: .format("small"), ignoredQueryItems: ["X-Amz-Signature", "X-Amz-Date"])
    print(signed.sourceKey ?? "")                           // https://images.example.com/a.jpg?v=2
    // snippet.end

    // snippet.policy
    var cachedOnly = ImageRequest(url: root.appendingPathComponent("coffee-cup.jpg"), format: "thumb")
    cachedOnly.cachePolicy = .cacheOnly                     // never fetch: a miss is an error
    do {
        _ = try await pipeline.image(for: cachedOnly)
    } catch {                                           // typed: error is a PipelineError
        guard error == .notCached else { throw error }
        print("not cached yet")
    }
    // snippet.end

    // snippet.task
    let task = pipeline.task(for: ImageRequest(url: photo, format: "small"))
    task.setPriority(.veryHigh)                             // while it waits for a slot
    let small = try await task.response
    print("small: \(small.image.width)×\(small.image.height)")

    let upcoming = ["astronaut.jpg", "coffee-cup.jpg", "hubble-deep-field.jpg"].map {
        ImageRequest(url: root.appendingPathComponent($0), format: "thumb")
    }
    let prefetch = pipeline.prefetch(upcoming)              // at low priority; prefetch.cancel() stops them
    let failures = await prefetch.wait()
    print("\(failures.count) prefetches failed")
    // snippet.end

    // snippet.encoded
    var encoded = ImageRequest(url: photo, format: "thumb")
    encoded.encoding = ImageEncoding(.webp, quality: 80)
    let bytes = try await pipeline.encodedImage(for: encoded)
    print("\(bytes.encoded.contentType), \(bytes.encoded.count) bytes, ETag \(bytes.encoded.etag), from \(bytes.tier)")

    // Let the pipeline decide the encoding from what the client takes, as a server does.
    var negotiated = ImageRequest(url: photo, format: "thumb")
    negotiated.output = OutputPolicy(quality: 80)
    negotiated.client = ClientPreferences(accept: "image/avif,image/webp,*/*")
    let answer = try await pipeline.answer(for: negotiated)
    print("\(answer.encoded.contentType); Vary: \(answer.vary ?? "none")")
    // snippet.end

    // snippet.purge
    try await pipeline.purge(request)                       // the original and everything made from it
    print(pipeline.counters.answers, pipeline.counters.decodes, pipeline.counters.encodes)
    pipeline.removeObserver(token)
    await pipeline.close()
    // snippet.end

    // snippet.suspend
    // Pause a large download while its image is off screen, and continue it later.
    func pauseAndResume(_ pipeline: ImagePipeline, _ request: ImageRequest) async throws -> ImageResponse {
        let task = pipeline.task(for: request)
        pipeline.suspendDownload(for: request)    // the connection closes; the bytes received are kept
        try await Task.sleep(for: .seconds(1))
        pipeline.resumeDownload(for: request)     // a Range request continues from them when the origin allows it
        return try await task.response
    }
    // snippet.end

    // MARK: S3

    // snippet.hide
    let environment = ProcessInfo.processInfo.environment
    // Only against a store named for it (never real AWS by accident when `make docs` runs this).
    guard environment["AWS_ACCESS_KEY_ID"] != nil, environment["AWS_SECRET_ACCESS_KEY"] != nil,
          environment["EASEL_S3_ENDPOINT"] != nil else {
        print("set AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and EASEL_S3_ENDPOINT for the S3 part")
        return
    }
    // snippet.show

    // snippet.s3Client
    // AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN and AWS_REGION; EASEL_S3_ENDPOINT
    // for an S3-compatible store (then path-style addressing).
    let client = try S3Client(configuration: .fromEnvironment(environment))
    let location = try S3Location("s3://easel-cache/variants/")
    try await client.put(bucket: location.bucket, key: location.prefix + "hello.txt", data: Data("hello".utf8),
                         contentType: "text/plain")
    let keys = try await client.allKeys(bucket: location.bucket, prefix: location.prefix)
    print("\(keys.count) objects under \(location)")
    // snippet.end

    // snippet.s3Pipeline
    let store = S3Store(location: location, client: client, readTimeout: .seconds(1))
    var s3Configuration = ImagePipeline.Configuration(
        cacheDirectory: cacheDirectory.appendingPathComponent("s3"),
        fetchers: [S3Fetcher(client: client), HTTPFetcher()])   // s3://bucket/key sources, then http(s)
    s3Configuration.sharedStores = [store]                      // read after the local disk, written after encodes
    let shared = try ImagePipeline(configuration: s3Configuration)
    var fromS3 = ImageRequest(url: URL(string: "s3://photos/originals/cat.jpg")!, format: "thumb")
    fromS3.encoding = ImageEncoding(.webp, quality: 80)
    let s3Answer = try await shared.encodedImage(for: fromS3)
    print("\(s3Answer.encoded.count) bytes from \(s3Answer.tier)")  // encodedShared where another machine made it
    // snippet.end

    // snippet.s3Shutdown
    await shared.close()                // waits for the copies into the shared tier
    await store.drainBackgroundWork()
    try await client.shutdown()
    // snippet.end
// snippet.hide
}
try await pipelineRequests()
// snippet.show
