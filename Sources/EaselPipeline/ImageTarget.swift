import EaselCodecs
import EaselStorage
import Foundation

/// Anything that shows one image at a time (a view, a cell, a tile of a contact sheet): the
/// reuse-safe loading of Haneke's and ImageStore's view extensions, without UIKit.
public protocol ImageTarget: AnyObject, Sendable {
    /// Called with the placeholder when a load starts, then with the image if the load is still
    /// the target's current one when it finishes. Called from any thread.
    func display(_ image: Bitmap?, for request: ImageRequest)
    /// Called when the target's current load fails (not when it is replaced or cancelled).
    func displayFailure(_ error: PipelineError, for request: ImageRequest)
}

extension ImageTarget {
    public func displayFailure(_ error: PipelineError, for request: ImageRequest) {}
}

/// Loads requests into targets: a new load into a target cancels its previous one, and an image
/// is delivered only if its load is still the target's current one, so a reused target never
/// shows an image meant for its previous use.
public final class ImageTargetLoader: Sendable {
    private struct Current {
        let generation: UInt64
        let task: ImageTask
    }
    private let pipeline: ImagePipeline
    private let current = Locked<[ObjectIdentifier: Current]>([:])
    private let generations = Locked<UInt64>(0)

    public init(pipeline: ImagePipeline) { self.pipeline = pipeline }

    /// Shows `placeholder`, then the image of `request` unless another load into `target` (or
    /// `cancel(target)`) came first.
    public func load(_ request: ImageRequest, into target: any ImageTarget, placeholder: Bitmap? = nil) {
        let key = ObjectIdentifier(target)
        let generation = generations.withLock { value in
            value += 1
            return value
        }
        let task = pipeline.task(for: request)
        let previous = current.withLock { $0.updateValue(Current(generation: generation, task: task), forKey: key) }
        previous?.task.cancel()
        target.display(placeholder, for: request)
        Task { [weak target] in
            let result: Result<ImageResponse, PipelineError>
            do throws(PipelineError) { result = .success(try await task.response) } catch { result = .failure(error) }
            guard let target else { return }
            // Deliver under the lock, so that a newer load cannot slip in between the check and
            // the display (the newer load's placeholder is shown after this image, not before).
            current.withLock { current in
                guard current[key]?.generation == generation else { return }
                current.removeValue(forKey: key)
                switch result {
                case .success(let response): target.display(response.image, for: request)
                case .failure(.cancelled): break
                case .failure(let error): target.displayFailure(error, for: request)
                }
            }
        }
    }

    /// Cancels the target's current load, if any.
    public func cancel(_ target: any ImageTarget) {
        let previous = current.withLock { $0.removeValue(forKey: ObjectIdentifier(target)) }
        previous?.task.cancel()
    }
}
