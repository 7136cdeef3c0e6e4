import Foundation

/// A tier of bytes by key that an image pipeline reads before doing work and fills after it:
/// the disk cache here, a shared remote store (object storage) elsewhere. The pipeline holds an
/// ordered list of them, so a new kind of tier plugs in without changing its flow.
///
/// Keys that belong together begin with one prefix (the pipeline starts every key with its
/// source), so "remove everything made from this source" is `removeValues(withKeyPrefix:)`: a
/// range of the disk index's key index, a prefix listing in object storage. No tier scans all of
/// its entries to purge one source.
public protocol DataStore: Sendable {
    /// A short name for logs and metrics ("disk", "s3").
    var storeName: String { get }
    /// The bytes stored for `key`; nil when absent, expired or damaged.
    func data(forKey key: String) async throws -> Data?
    /// Stores `data` for `key`, replacing what was there; after `expiresAt` it is never returned.
    func set(_ data: Data, forKey key: String, expiresAt: Date?) async throws
    /// Removes the value for `key`, if any.
    func removeValue(forKey key: String) async throws
    /// Removes every value whose key begins with `prefix` (`prefix` must not be empty).
    func removeValues(withKeyPrefix prefix: String) async throws
}

/// The keys that begin with a prefix are the half-open range `prefix ..< upperBound`, in the
/// order of their UTF-8 bytes (which is the order of their code points).
package enum KeyPrefix {
    /// The least string greater than every string that begins with `prefix`: the prefix with its
    /// last scalar replaced by the next one (a trailing U+10FFFF is dropped and the one before it
    /// is increased instead); nil when there is none (an empty prefix, or only U+10FFFF).
    package static func upperBound(of prefix: String) -> String? {
        var scalars = Array(prefix.unicodeScalars)
        while let last = scalars.popLast() {
            var next = last.value + 1
            if next == 0xD800 { next = 0xE000 } // surrogates are not scalars
            if let scalar = Unicode.Scalar(next) {
                var result = String.UnicodeScalarView()
                result.append(contentsOf: scalars)
                result.append(scalar)
                return String(result)
            }
        }
        return nil
    }
}

extension DiskCache: DataStore {
    public var storeName: String { "disk" }
}
