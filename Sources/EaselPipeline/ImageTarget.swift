import EaselSupport
import Dispatch
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
///
/// Deliveries to one target happen one at a time and in order, on a serial queue of the
/// loader's (never inside a lock), so `display` may itself start or cancel loads.
public final class ImageTargetLoader: Sendable {
    private struct Current {
        let generation: UInt64
        let task: ImageTask
    }
    private let pipeline: ImagePipeline
    private let current = Locked<[ObjectIdentifier: Current]>([:])
    private let generations = Locked<UInt64>(0)
    /// A target always uses the same queue (chosen by its identity), which keeps its deliveries
    /// in order without a queue per target.
    private let queues = (0..<16).map { DispatchQueue(label: "easel.targets.\($0)") }

    /// Creates a loader whose loads run on `pipeline`.
    public init(pipeline: ImagePipeline) { self.pipeline = pipeline }

    private func queue(for key: ObjectIdentifier) -> DispatchQueue {
        queues[Int(UInt(bitPattern: key.hashValue) % UInt(queues.count))]
    }

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
        let queue = queue(for: key)
        queue.async { [weak target] in
            guard let target, self.isCurrent(key, generation) else { return }
            target.display(placeholder, for: request)
        }
        Task { [weak target] in
            let result: Result<ImageResponse, PipelineError>
            do throws(PipelineError) { result = .success(try await task.response) } catch { result = .failure(error) }
            let delivery = result
            queue.async { [weak target] in
                // Checked on the target's queue, right before showing: a newer load either came
                // before (and this is dropped) or comes after (and its placeholder follows).
                let stillCurrent = self.current.withLock { current -> Bool in
                    guard current[key]?.generation == generation else { return false }
                    current.removeValue(forKey: key)
                    return true
                }
                guard stillCurrent, let target else { return }
                switch delivery {
                case .success(let response): target.display(response.image, for: request)
                case .failure(.cancelled): break
                case .failure(let error): target.displayFailure(error, for: request)
                }
            }
        }
    }

    private func isCurrent(_ key: ObjectIdentifier, _ generation: UInt64) -> Bool {
        current.withLock { $0[key]?.generation == generation }
    }

    /// Cancels the target's current load, if any.
    public func cancel(_ target: any ImageTarget) {
        let previous = current.withLock { $0.removeValue(forKey: ObjectIdentifier(target)) }
        previous?.task.cancel()
    }
}
