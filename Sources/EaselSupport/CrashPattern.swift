import Foundation

/// Deterministic values for crash and multi-process tests: the bytes depend only on key and
/// length, so a reader can tell a complete value from a torn or foreign one.
package enum CrashPattern {
    package static func value(key: String, length: Int) -> Data {
        var generator = SplitMix64(seed: Checksum.compute(Array(key.utf8)) ^ UInt64(length))
        var data = Data(count: length)
        data.withUnsafeMutableBytes { raw in
            var offset = 0
            while offset + 8 <= length {
                raw.storeBytes(of: generator.next(), toByteOffset: offset, as: UInt64.self)
                offset += 8
            }
            while offset < length {
                raw[offset] = UInt8(truncatingIfNeeded: generator.next())
                offset += 1
            }
        }
        return data
    }
}

/// A tiny seeded generator (SplitMix64) for reproducible test data.
package struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    package init(seed: UInt64) { state = seed }
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
