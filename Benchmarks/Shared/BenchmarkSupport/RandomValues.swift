import Foundation

/// Incompressible values: `count` distinct blobs of `size` random bytes.
/// SplitMix64 seeded from the system generator (which would make one
/// getrandom syscall per 8 bytes).
public func randomValues(size: Int, count: Int) -> [Data] {
    var system = SystemRandomNumberGenerator()
    var state: UInt64 = system.next()
    func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    return (0..<count).map { _ in
        var bytes = [UInt8](repeating: 0, count: size)
        bytes.withUnsafeMutableBytes { raw in
            var offset = 0
            while offset < size {
                var word = next()
                let n = min(8, size - offset)
                withUnsafeBytes(of: &word) { w in
                    raw.baseAddress!.advanced(by: offset).copyMemory(from: w.baseAddress!, byteCount: n)
                }
                offset += n
            }
        }
        return Data(bytes)
    }
}

