/// Something that produces the value for a key when the cache misses (Haneke's `Fetcher`).
///
/// `EaselPipeline` provides network and file fetchers for images; any async closure works too
/// through `ClosureFetcher`.
public protocol Fetcher<Value>: Sendable {
    /// The type of value the fetcher produces.
    associatedtype Value: Sendable
    /// The cache key of the value this fetcher produces.
    var key: String { get }
    /// Produces the value; cancellation is cooperative.
    func fetch() async throws -> Value
}

/// A fetcher made from a key and an async closure.
public struct ClosureFetcher<Value: Sendable>: Fetcher {
    public let key: String
    private let body: @Sendable () async throws -> Value

    /// A fetcher for `key` whose `fetch()` calls `body`.
    public init(key: String, _ body: @escaping @Sendable () async throws -> Value) {
        self.key = key
        self.body = body
    }

    public func fetch() async throws -> Value { try await body() }
}
