/// Runs `body`, failing with `timedOut` when it has not finished within `limit` (the body is
/// then cancelled), or with `cancelled` when neither finished because the caller was cancelled.
package func withTimeLimit<T: Sendable, Failure: Error>(
    _ limit: Duration, timedOut: Failure, cancelled: Failure,
    _ body: @escaping @Sendable () async throws(Failure) -> T
) async throws(Failure) -> T {
    let result: Result<T, Failure> = await withTaskGroup(of: Result<T, Failure>?.self) { group in
        group.addTask {
            do throws(Failure) { return .success(try await body()) } catch { return .failure(error) }
        }
        group.addTask {
            do { try await Task.sleep(for: limit) } catch { return nil }  // cancelled: the body ended first
            return .failure(timedOut)
        }
        var first: Result<T, Failure>?
        while first == nil, let next = await group.next() { first = next }
        group.cancelAll()
        return first ?? .failure(cancelled)
    }
    return try result.get()
}
