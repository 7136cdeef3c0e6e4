/// Runs `body`, failing with `timedOut` when it has not finished within `limit` (nil: no limit),
/// with `cancelled` as soon as `abandonWhen` returns (e.g. a client that left), or with
/// `cancelled` when neither finished because the caller was cancelled; in each case `body` is
/// cancelled. One task group for all of it; without a limit or `abandonWhen`, `body` runs as it is.
package func withTimeLimit<T: Sendable, Failure: Error>(
    _ limit: Duration?, timedOut: Failure, cancelled: Failure, abandonWhen: (@Sendable () async -> Void)? = nil,
    _ body: @escaping @Sendable () async throws(Failure) -> T
) async throws(Failure) -> T {
    if limit == nil, abandonWhen == nil { return try await body() }
    let result: Result<T, Failure> = await withTaskGroup(of: Result<T, Failure>?.self) { group in
        group.addTask {
            do throws(Failure) { return .success(try await body()) } catch { return .failure(error) }
        }
        if let limit {
            group.addTask {
                do { try await Task.sleep(for: limit) } catch { return nil }  // cancelled: the body ended first
                return .failure(timedOut)
            }
        }
        if let abandonWhen {
            group.addTask {
                await abandonWhen()
                return .failure(cancelled)
            }
        }
        var first: Result<T, Failure>?
        while first == nil, let next = await group.next() { first = next }
        group.cancelAll()
        return first ?? .failure(cancelled)
    }
    return try result.get()
}
