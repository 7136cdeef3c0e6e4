/// A string key compared byte for byte (by its UTF-8).
///
/// `String`'s `==` treats canonically equivalent strings as equal: "é" written as one scalar
/// and "e" followed by a combining accent are the same `String` key. A cache must return a
/// value only for the exact key that stored it, as the disk index does, so the in-memory levels
/// key by `CacheKey`. String literals convert: `memory.value(forKey: "a")`.
public struct CacheKey: Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The key's text, compared by its UTF-8 bytes.
    public let string: String

    /// The key for `string`, as it is (not normalised).
    public init(_ string: String) { self.string = string }
    public init(stringLiteral value: String) { self.string = value }

    public var description: String { string }

    public static func == (lhs: CacheKey, rhs: CacheKey) -> Bool {
        lhs.string.utf8.elementsEqual(rhs.string.utf8)
    }

    public func hash(into hasher: inout Hasher) {
        let utf8 = string.utf8
        hasher.combine(utf8.count)
        if utf8.withContiguousStorageIfAvailable({ hasher.combine(bytes: UnsafeRawBufferPointer($0)) }) == nil {
            for byte in utf8 { hasher.combine(byte) }
        }
    }
}
