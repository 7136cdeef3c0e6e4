import EaselSupport
import EaselCodecs
import EaselStorage
import Foundation
import Tracing

/// The fetch stage: a source's original from the disk tier, else its fetcher (HTTP caching,
/// revalidation, downloads with suspension and resumption); one per source, cache policy and
/// purge mark, however many decodes wait for it.
struct FetchTask: PipelineTask {
    let pipeline: ImagePipeline
    let url: URL
    let sourceKey: String
    let policy: ImageRequest.CachePolicy
    let mark: PurgeMarks.Mark

    var key: WorkKey { .fetch(source: sourceKey, policy: policy, mark: mark) }
    static func coalescer(in graph: TaskGraph) -> WorkCoalescer<WorkKey, ImagePipeline.Original> { graph.fetches }

    /// The original: the disk tier's when fresh (or revalidated with the origin), else fetched;
    /// a fetched one is stored once it has decoded (`pendingStore`: a corrupt body is never kept).
    func run(_ handle: PriorityHandle) async throws(PipelineError) -> ImagePipeline.Original {
        typealias Original = ImagePipeline.Original

        let key = StoreKey.original(sourceKey)
        let fetcher = pipeline.configuration.fetchers.first(where: { $0.canFetch(url) })
        var stored: (data: Data, metadata: HTTPMetadata)?
        // No lookup for a fetcher whose originals are never stored (local files).
        if policy != .reload, fetcher?.cachesOriginals ?? true, let disk = pipeline.disk,
           let record = await Traces.cacheRead(store: disk.storeName, entry: "original", { try? await disk.data(forKey: key) }) {
            stored = OriginalRecord.decode(record)
        }
        if let stored {
            if policy == .cacheOnly || pipeline.isFresh(stored.metadata) {
                return Original(data: stored.data, metadata: stored.metadata, tier: .diskOriginal, freshUntil: pipeline.freshUntil(stored.metadata))
            }
        } else if policy == .cacheOnly {
            throw .notCached
        }
        let fetchStart = ContinuousClock.now
        // A client span; AsyncHTTPClient's own span for each request to the origin (HTTP or S3)
        // is its child and sends its context on in `traceparent`.
        let (response, data) = try await Traces.withSpan("easel.fetch", kind: .client) { span throws(PipelineError) in
            let (response, data) = try await pipeline.download(url: url, sourceKey: sourceKey, revalidating: stored?.metadata, handle: handle)
            span?.updateAttributes { attributes in
                attributes["server.address"] = url.host
                attributes["easel.bytes"] = data.count
                attributes["easel.revalidated"] = stored != nil
                attributes["easel.cache.result"] = response.outcome == .notModified ? "not-modified" : "fetched"
            }
            return (response, data)
        }
        pipeline.metrics.stage(.fetch, since: fetchStart)
        if response.outcome == .notModified, let stored {
            // 304: the stored copy is fresh again, with the origin's new caching headers.
            var metadata = stored.metadata
            metadata.storedAt = Date().timeIntervalSince1970
            if let cacheControl = response.metadata.cacheControl { metadata.cacheControl = cacheControl }
            if let etag = response.metadata.etag { metadata.etag = etag }
            if let lastModified = response.metadata.lastModified { metadata.lastModified = lastModified }
            if let expires = response.metadata.expires { metadata.expires = expires }
            if policy != .noStore, let disk = pipeline.disk {
                if metadata.forbidsStoring, pipeline.configuration.httpCaching == .respectHeaders {
                    try? await disk.removeValue(forKey: key)
                } else {
                    try? await disk.set(OriginalRecord.encode(stored.data, metadata), forKey: key)
                }
            }
            return Original(data: stored.data, metadata: metadata, tier: .diskOriginal, freshUntil: pipeline.freshUntil(metadata))
        }
        let metadata = response.metadata
        let storable = policy != .noStore && (pipeline.configuration.httpCaching == .aggressive || !metadata.forbidsStoring)
            && fetcher?.cachesOriginals ?? true
        let until = metadata.forbidsStoring && pipeline.configuration.httpCaching == .respectHeaders ? Date() : pipeline.freshUntil(metadata)
        // Stored once it has decoded: a corrupt body is never cached.
        return Original(data: data, metadata: metadata, tier: fetcher?.tier ?? .network, freshUntil: until,
                        pendingStore: storable && pipeline.disk != nil ? OnceFlag() : nil,
                        cacheable: pipeline.configuration.httpCaching == .aggressive || !metadata.forbidsStoring)
        }
}

extension ImagePipeline {
    /// A source's original, as the fetch stage hands it to decodes.
    struct Original: Sendable {
        var data: Data
        var metadata: HTTPMetadata
        var tier: ImageTier
        /// When derived variants stop being fresh (nil: never, aggressive caching).
        var freshUntil: Date?
        /// Set for a fetched original to store in the disk cache once it has decoded.
        var pendingStore: OnceFlag?
        /// False for a `no-store` response (caching respects headers): nothing made from it is kept.
        var cacheable = true
    }

    func isFresh(_ metadata: HTTPMetadata) -> Bool {
        guard let until = freshUntil(metadata) else { return true }
        return until > Date()
    }

    func freshUntil(_ metadata: HTTPMetadata) -> Date? {
        guard configuration.httpCaching == .respectHeaders else { return nil }
        let lifetime = metadata.maxAge ?? configuration.defaultFreshness
        return Date(timeIntervalSince1970: metadata.storedAt + lifetime)
    }

    // MARK: Downloads, suspension

    struct Suspensions {
        var suspended: Set<String> = []
        var attempts: [String: Task<Result<FetchResponse, PipelineError>, Never>] = [:]
        var waiters: [String: [UInt64: CheckedContinuation<Void, Never>]] = [:]
        /// Downloads whose attempt a suspension cancelled (so the loop keeps their bytes).
        var interrupted: Set<String> = []
    }

    /// Pauses the download of this URL's original (now or when it starts): the connection is
    /// closed, the bytes received are kept, and requesters keep waiting.
    public func suspendDownload(for request: ImageRequest) {
        guard let key = request.sourceKey else { return }
        let attempt = suspensions.withLock { state in
            state.suspended.insert(key)
            if state.attempts[key] != nil { state.interrupted.insert(key) }
            return state.attempts[key]
        }
        attempt?.cancel()
    }

    /// Continues a suspended download: with an HTTP Range request from the bytes already
    /// received when the origin allows it (validated with If-Range), from the start otherwise.
    public func resumeDownload(for request: ImageRequest) {
        guard let key = request.sourceKey else { return }
        let waiters = suspensions.withLock { state in
            state.suspended.remove(key)
            return state.waiters.removeValue(forKey: key) ?? [:]
        }
        for waiter in waiters.values { waiter.resume() }
    }

    func waitWhileSuspended(_ key: String) async throws(PipelineError) {
        let id = nextID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let wait = suspensions.withLock { state -> Bool in
                    guard state.suspended.contains(key), !Task.isCancelled else { return false }
                    state.waiters[key, default: [:]][id] = continuation
                    return true
                }
                if !wait { continuation.resume() }
            }
        } onCancel: {
            let waiter = suspensions.withLock { $0.waiters[key]?.removeValue(forKey: id) }
            waiter?.resume()
        }
        if Task.isCancelled { throw .cancelled }
    }

    /// The original's bytes from its fetcher: a local file at once (a read on the I/O pool,
    /// which bounds it); anything else in a download slot, by priority, at the download rate,
    /// suspendable and resumed from the bytes received.
    func download(url: URL, sourceKey: String, revalidating: HTTPMetadata?,
                  handle: PriorityHandle) async throws(PipelineError) -> (FetchResponse, Data) {
        guard let fetcher = configuration.fetchers.first(where: { $0.canFetch(url) }) else {
            throw .unsupportedURL(url.absoluteString)
        }
        let sink = FetchSink { [observers] received, expected in
            observers.emit(.progress(url: url, received: received, expected: expected))
        }
        if fetcher.tier == .file {
            metrics.fetches.increment()
            observers.emit(.downloadStarted(url: url))
            do throws(PipelineError) {
                let response = try await fetcher.fetch(FetchRequest(url: url, revalidating: revalidating, resume: nil), into: sink)
                observers.emit(.downloadEnded(url: url, received: sink.count, error: nil))
                return (response, sink.data)
            } catch {
                observers.emit(.downloadEnded(url: url, received: sink.count, error: error))
                throw error
            }
        }
        var resume: (offset: Int, validator: String)?
        var validator: String?
        while true {
            try await waitWhileSuspended(sourceKey)
            let request = FetchRequest(url: url, revalidating: revalidating, resume: resume)
            let result = try await tasks.downloadSlots.run(priority: handle) { () async throws(PipelineError) -> Result<FetchResponse, PipelineError> in
                let attempt = Task { () -> Result<FetchResponse, PipelineError> in
                    do throws(PipelineError) {
                        return .success(try await fetcher.fetch(request, into: sink))
                    } catch {
                        return .failure(error)
                    }
                }
                let suspendedAlready = suspensions.withLock { state -> Bool in
                    state.attempts[sourceKey] = attempt
                    guard state.suspended.contains(sourceKey) else { return false }
                    state.interrupted.insert(sourceKey)
                    return true
                }
                if suspendedAlready { attempt.cancel() }
                metrics.fetches.increment()
                observers.emit(.downloadStarted(url: url))
                let result = await withTaskCancellationHandler { await attempt.value } onCancel: { attempt.cancel() }
                if !observers.isEmpty {
                    switch result {
                    case .success: observers.emit(.downloadEnded(url: url, received: sink.count, error: nil))
                    case .failure(let error): observers.emit(.downloadEnded(url: url, received: sink.count, error: error))
                    }
                }
                suspensions.withLock { state in
                    if state.attempts[sourceKey] == attempt { state.attempts.removeValue(forKey: sourceKey) }
                }
                return result
            }
            switch result {
            case .success(let response):
                return (response, sink.data)
            case .failure(.cancelled) where !Task.isCancelled && suspensions.withLock({ $0.interrupted.remove(sourceKey) != nil }):
                // Suspended: keep what arrived; continue from there once resumed.
                validator = sink.rangeValidator ?? validator
                if let validator, sink.count > 0 {
                    resume = (sink.count, validator)
                } else {
                    sink.reset()
                    resume = nil
                }
                continue
            case .failure(let error):
                throw error
            }
        }
    }
}
