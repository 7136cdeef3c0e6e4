import EaselStorage
import EaselTables
import Foundation

/// One request in flight: await its response, change its priority while it waits, cancel it.
public final class ImageTask: Sendable {
    /// The request's ID in the pipeline's events (`PipelineEvent`'s `request`).
    public let id: UInt64
    /// The request as it was made.
    public let request: ImageRequest
    private let pipeline: ImagePipeline
    private let task: Task<Result<ImageResponse, PipelineError>, Never>

    init(pipeline: ImagePipeline, request: ImageRequest, id: UInt64) {
        self.id = id
        self.request = request
        self.pipeline = pipeline
        task = Task {
            do throws(PipelineError) {
                return .success(try await pipeline.response(for: request, id: id))
            } catch {
                return .failure(error)
            }
        }
    }

    /// The image; `.cancelled` if the task was cancelled.
    public var response: ImageResponse {
        get async throws(PipelineError) { try await task.value.get() }
    }

    /// Raises or lowers this request's priority; the shared work follows the highest of its
    /// requesters'.
    public func setPriority(_ priority: ImageRequest.Priority) { pipeline.setPriority(priority, id: id) }

    /// Cancels this request: `response` throws `.cancelled`, and shared work stops once no
    /// other request waits for it.
    public func cancel() { task.cancel() }
}

/// Prefetching in flight; `cancel()` stops what has not finished.
public final class PrefetchHandle: Sendable {
    /// One task per prefetched request, in the order given.
    public let tasks: [ImageTask]
    init(tasks: [ImageTask]) { self.tasks = tasks }
    /// Cancels every prefetch that has not finished.
    public func cancel() { for task in tasks { task.cancel() } }
    /// Waits for every prefetch; returns the failures.
    public func wait() async -> [(ImageRequest, PipelineError)] {
        var failures: [(ImageRequest, PipelineError)] = []
        for task in tasks {
            do throws(PipelineError) { _ = try await task.response } catch { failures.append((task.request, error)) }
        }
        return failures
    }
}

extension ImageFormat {
    /// `thumb` (fit in 256×256), `small` (fit in 512×512) and `square` (fill 256×256), one family.
    public static let defaults: [ImageFormat] = [
        ImageFormat(name: "thumb", family: "default", width: 256, height: 256, fit: .fit, maximumCount: 10_000),
        ImageFormat(name: "small", family: "default", width: 512, height: 512, fit: .fit, maximumCount: 2_000),
        ImageFormat(name: "square", family: "default", width: 256, height: 256, fit: .fill, maximumCount: 10_000),
    ]
}
