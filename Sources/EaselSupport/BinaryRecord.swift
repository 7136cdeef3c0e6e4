import Foundation

// The one reader and writer of Easel's on-disk records (disk cache entry trailers, image table
// headers and slot records, pixel records, the pipeline's variant and original records): every
// field little-endian, whatever the machine, and every read bounds-checked.

/// Builds a record field by field.
package struct RecordWriter {
    package private(set) var bytes: [UInt8] = []

    package init(capacity: Int = 64) { bytes.reserveCapacity(capacity) }

    package var count: Int { bytes.count }

    package mutating func append<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// A `Double` as its IEEE 754 bits.
    package mutating func append(_ value: Double) { append(value.bitPattern) }

    package mutating func append(_ uuid: UUID) { withUnsafeBytes(of: uuid.uuid) { bytes.append(contentsOf: $0) } }

    package mutating func append(bytes more: some Sequence<UInt8>) { bytes.append(contentsOf: more) }

    /// ASCII or UTF-8 text, no length.
    package mutating func append(text: String) { bytes.append(contentsOf: text.utf8) }

    /// Zeros up to `count` bytes in all.
    package mutating func pad(to count: Int) {
        if bytes.count < count { bytes.append(contentsOf: repeatElement(0, count: count - bytes.count)) }
    }

    package var data: Data { Data(bytes) }
}

/// Reads a record field by field; every read returns nil past the end.
package struct RecordReader {
    private let bytes: UnsafeRawBufferPointer
    package private(set) var offset = 0

    package init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    package var remainingCount: Int { bytes.count - offset }
    /// What has not been read.
    package var remaining: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: bytes[offset...]) }

    package mutating func read<T: FixedWidthInteger>(_: T.Type) -> T? {
        let size = MemoryLayout<T>.size
        guard remainingCount >= size else { return nil }
        defer { offset += size }
        return T(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
    }

    package mutating func readDouble() -> Double? { read(UInt64.self).map(Double.init(bitPattern:)) }

    package mutating func readUUID() -> UUID? {
        guard remainingCount >= 16 else { return nil }
        defer { offset += 16 }
        return UUID(uuid: bytes.loadUnaligned(fromByteOffset: offset, as: uuid_t.self))
    }

    /// The next `count` bytes.
    package mutating func read(count: Int) -> UnsafeRawBufferPointer? {
        guard count >= 0, remainingCount >= count else { return nil }
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)])
    }

    /// True (and past it) when the next bytes are `text`.
    package mutating func expect(text: String) -> Bool {
        guard let next = read(count: text.utf8.count), next.elementsEqual(text.utf8) else { return false }
        return true
    }

    package mutating func skip(_ count: Int) -> Bool { read(count: count) != nil }
}

// Fields at fixed offsets, for records updated in place (a mapped image table's slot records).
extension UnsafeMutableRawPointer {
    package func storeLittleEndian<T: FixedWidthInteger>(_ value: T, at offset: Int) {
        storeBytes(of: value.littleEndian, toByteOffset: offset, as: T.self)
    }

    package func storeUUID(_ uuid: UUID, at offset: Int) { storeBytes(of: uuid.uuid, toByteOffset: offset, as: uuid_t.self) }
}

extension UnsafeRawPointer {
    package func loadLittleEndian<T: FixedWidthInteger>(_: T.Type, at offset: Int) -> T {
        T(littleEndian: loadUnaligned(fromByteOffset: offset, as: T.self))
    }

    package func loadUUID(at offset: Int) -> UUID { UUID(uuid: loadUnaligned(fromByteOffset: offset, as: uuid_t.self)) }
}
