import EaselSupport
import EaselCodecs
import EaselStorage
import Foundation

/// One image as a model object (OGImage): it loads through a pipeline and tells its observers of
/// every change of its state, image, error and metadata.
///
/// ```swift
/// let avatar = ObservableImage(pipeline: pipeline, request: ImageRequest(url: url, format: "thumb"))
/// let token = avatar.addObserver { snapshot in render(snapshot.image, snapshot.state) }
/// avatar.load()
/// ```
public final class ObservableImage: Sendable {
    /// Where the image's load stands.
    public enum State: Sendable, Equatable {
        /// Not loading: never started, or cancelled.
        case idle
        /// A load is in flight.
        case loading
        /// Loaded, by the tier that answered.
        case loaded(ImageTier)
        /// The last load failed with this error (`load()` tries again).
        case failed(PipelineError)
    }

    /// Everything observers see, at once.
    public struct Snapshot: Sendable {
        /// Where the load stands.
        public var state: State
        /// The loaded image; nil until a load succeeds.
        public var image: Bitmap?
        /// Why the last load failed; nil unless the state is `failed`.
        public var error: PipelineError?
        /// Facts about the original (when it was read for this load).
        public var sourceInfo: ImageInfo?
    }

    /// The request every load makes.
    public let request: ImageRequest
    private let pipeline: ImagePipeline
    private let snapshot = Locked(Snapshot(state: .idle))
    /// The load in flight and its generation (a cancelled load's late result is ignored).
    private let task = Locked<(generation: UInt64, task: ImageTask?)>((0, nil))
    private let observers = Observers<Snapshot>()

    /// Creates an idle image that loads `request` through `pipeline` when `load()` is called.
    public init(pipeline: ImagePipeline, request: ImageRequest) {
        self.pipeline = pipeline
        self.request = request
    }

    /// The state, image, error and source facts now, read together.
    public var current: Snapshot { snapshot.withLock { $0 } }
    /// Where the load stands now.
    public var state: State { current.state }
    /// The loaded image; nil until a load succeeds.
    public var image: Bitmap? { current.image }
    /// Why the last load failed; nil unless the state is `failed`.
    public var error: PipelineError? { current.error }

    /// `handler` is called with every change, in order, outside any lock.
    public func addObserver(_ handler: @escaping @Sendable (Snapshot) -> Void) -> ObserverToken { observers.add(handler) }
    /// Stops calling the handler `addObserver(_:)` returned `token` for.
    public func removeObserver(_ token: ObserverToken) { observers.remove(token) }
    /// The changes as an async sequence.
    public func changes() -> AsyncStream<Snapshot> { observers.stream() }

    /// Starts loading (again, if it failed); does nothing while loading or once loaded.
    public func load() {
        let started = snapshot.withLock { snapshot -> Snapshot? in
            switch snapshot.state {
            case .loading, .loaded: return nil
            case .idle, .failed:
                snapshot.state = .loading
                snapshot.error = nil
                return snapshot
            }
        }
        guard let started else { return }
        observers.emit(started)
        let imageTask = pipeline.task(for: request)
        let generation = task.withLock { current in
            current = (current.generation + 1, imageTask)
            return current.generation
        }
        Task {
            let result: Result<ImageResponse, PipelineError>
            do throws(PipelineError) { result = .success(try await imageTask.response) } catch { result = .failure(error) }
            let next = task.withLock { current -> Snapshot? in
                guard current.generation == generation else { return nil }  // cancelled, maybe reloaded since
                current.task = nil
                return snapshot.withLock { snapshot in
                    switch result {
                    case .success(let response):
                        snapshot = Snapshot(state: .loaded(response.tier), image: response.image, error: nil, sourceInfo: response.sourceInfo)
                    case .failure(let error):
                        snapshot.state = error == .cancelled ? .idle : .failed(error)
                        snapshot.error = error == .cancelled ? nil : error
                    }
                    return snapshot
                }
            }
            if let next { observers.emit(next) }
        }
    }

    /// Stops a load in progress: the state is idle again at once, and `load()` starts afresh.
    public func cancel() {
        let stopped = task.withLock { current -> ImageTask? in
            defer { current = (current.generation + 1, nil) }
            return current.task
        }
        guard let stopped else { return }
        stopped.cancel()
        let idle = snapshot.withLock { snapshot -> Snapshot in
            if snapshot.state == .loading { snapshot.state = .idle }
            return snapshot
        }
        observers.emit(idle)
    }
}
