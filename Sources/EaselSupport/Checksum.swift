import CXXHash

/// Fast 64-bit checksums for detecting torn or damaged entries: XXH64 (`compute`, in value files'
/// trailers and older index rows) and XXH3-64 (`xxh3`, inline values in the index: about 3× as
/// fast on 100 KB with AVX2, see Benchmarks/peers/checksum-speed.sh).
///
/// It is not a cryptographic hash: it guards against accidents (a crash mid-write, a bad sector,
/// a truncated file), not against an attacker who can write into the cache directory.
package enum Checksum {
    private static let p1: UInt64 = 0x9E37_79B1_85EB_CA87
    private static let p2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    private static let p3: UInt64 = 0x1656_67B1_9E37_79F9
    private static let p4: UInt64 = 0x85EB_CA77_C2B2_AE63
    private static let p5: UInt64 = 0x27D4_EB2F_1656_67C5

    @inline(__always)
    private static func round(_ acc: UInt64, _ input: UInt64) -> UInt64 {
        var acc = acc &+ input &* p2
        acc = (acc << 31) | (acc >> 33)
        return acc &* p1
    }

    @inline(__always)
    private static func merge(_ acc: UInt64, _ value: UInt64) -> UInt64 {
        let acc = acc ^ round(0, value)
        return acc &* p1 &+ p4
    }

    /// The checksum of `buffer`, seeded with `seed`.
    package static func compute(_ buffer: UnsafeRawBufferPointer, seed: UInt64 = 0) -> UInt64 {
        let count = buffer.count
        guard let base = buffer.baseAddress else { return finish(seed &+ p5, length: 0, tail: buffer[...]) }
        var offset = 0
        var hash: UInt64
        if count >= 32 {
            var v1 = seed &+ p1 &+ p2
            var v2 = seed &+ p2
            var v3 = seed
            var v4 = seed &- p1
            let limit = count - 32
            while offset <= limit {
                v1 = round(v1, UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
                v2 = round(v2, UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self)))
                v3 = round(v3, UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset + 16, as: UInt64.self)))
                v4 = round(v4, UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset + 24, as: UInt64.self)))
                offset += 32
            }
            hash = ((v1 << 1) | (v1 >> 63)) &+ ((v2 << 7) | (v2 >> 57))
                &+ ((v3 << 12) | (v3 >> 52)) &+ ((v4 << 18) | (v4 >> 46))
            hash = merge(hash, v1)
            hash = merge(hash, v2)
            hash = merge(hash, v3)
            hash = merge(hash, v4)
        } else {
            hash = seed &+ p5
        }
        hash = hash &+ UInt64(count)
        return finish(hash, length: count, tail: buffer[offset...])
    }

    private static func finish(_ hash: UInt64, length: Int, tail: Slice<UnsafeRawBufferPointer>) -> UInt64 {
        var hash = hash
        var index = tail.startIndex
        let end = tail.endIndex
        let base = tail.base.baseAddress
        while end - index >= 8, let base {
            let k = round(0, UInt64(littleEndian: base.loadUnaligned(fromByteOffset: index, as: UInt64.self)))
            hash ^= k
            hash = ((hash << 27) | (hash >> 37)) &* p1 &+ p4
            index += 8
        }
        if end - index >= 4, let base {
            hash ^= UInt64(UInt32(littleEndian: base.loadUnaligned(fromByteOffset: index, as: UInt32.self))) &* p1
            hash = ((hash << 23) | (hash >> 41)) &* p2 &+ p3
            index += 4
        }
        while index < end {
            hash ^= UInt64(tail.base[index]) &* p5
            hash = ((hash << 11) | (hash >> 53)) &* p1
            index += 1
        }
        hash ^= hash >> 33
        hash = hash &* p2
        hash ^= hash >> 29
        hash = hash &* p3
        hash ^= hash >> 32
        return hash
    }

    /// The checksum of a byte sequence that has contiguous storage.
    package static func compute<Bytes: ContiguousBytes>(_ bytes: Bytes, seed: UInt64 = 0) -> UInt64 {
        bytes.withUnsafeBytes { compute($0, seed: seed) }
    }

    /// XXH3-64 (seed 0) of `buffer`, from xxHash itself (CXXHash).
    package static func xxh3(_ buffer: UnsafeRawBufferPointer) -> UInt64 {
        easel_xxh3_64(buffer.baseAddress, buffer.count)
    }

    package static func xxh3<Bytes: ContiguousBytes>(_ bytes: Bytes) -> UInt64 {
        bytes.withUnsafeBytes { xxh3($0) }
    }

    /// One form of XXH3, for tests that compare them: the build's baseline form, or AVX2 (the
    /// baseline where the processor lacks it; see `xxh3UsesAVX2`).
    package static func xxh3(_ buffer: UnsafeRawBufferPointer, avx2: Bool) -> UInt64 {
        easel_xxh3_64_variant(buffer.baseAddress, buffer.count, avx2 ? 1 : 0)
    }

    /// Whether `xxh3` runs xxHash's AVX2 form on this processor.
    package static var xxh3UsesAVX2: Bool { easel_xxh3_uses_avx2() != 0 }
}

import Foundation
