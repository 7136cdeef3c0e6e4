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

extension KeyPrefix {
    /// The group a key begins with, when it begins with one: `"<n>:"`, then `n` bytes of UTF-8,
    /// then `|` (the pipeline begins every key with its source written so). Every key of a group
    /// begins with the same group text, and one group is never a prefix of another, so a store
    /// that cannot list arbitrary prefixes (object storage under hashed names) can still remove
    /// a whole group.
    package static func group(of key: String) -> Substring? {
        let bytes = key.utf8
        var index = bytes.startIndex
        var length = 0
        var digits = 0
        while index < bytes.endIndex, let digit = Optional(bytes[index]), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(digit) {
            length = length &* 10 &+ Int(digit - UInt8(ascii: "0"))
            digits += 1
            guard digits <= 9 else { return nil }
            index = bytes.index(after: index)
        }
        guard digits > 0, index < bytes.endIndex, bytes[index] == UInt8(ascii: ":") else { return nil }
        let start = bytes.index(after: index)
        guard let end = bytes.index(start, offsetBy: length, limitedBy: bytes.endIndex), end < bytes.endIndex,
              bytes[end] == UInt8(ascii: "|") else { return nil }
        return Substring(key.utf8[..<bytes.index(after: end)])
    }
}
