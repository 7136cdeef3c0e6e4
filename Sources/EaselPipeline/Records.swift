import EaselStorage
import Foundation

/// A processed variant in the disk cache: "EVR1", when it stops being fresh (8 bytes, a
/// little-endian Double of seconds since 1970, 0 for never), then the encoded image.
enum VariantRecord {
    static func encode(_ data: Data, freshUntil: Date?) -> Data {
        var record = Data("EVR1".utf8)
        withUnsafeBytes(of: (freshUntil?.timeIntervalSince1970 ?? 0).bitPattern.littleEndian) { record.append(contentsOf: $0) }
        record.append(data)
        return record
    }

    static func decode(_ record: Data) -> (data: Data, freshUntil: Date?)? {
        guard record.count > 12, record.prefix(4) == Data("EVR1".utf8) else { return nil }
        let start = record.startIndex
        let bits = record[(start + 4)..<(start + 12)].withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
        let seconds = Double(bitPattern: bits)
        return (Data(record[(start + 12)...]), seconds == 0 ? nil : Date(timeIntervalSince1970: seconds))
    }
}

/// True for the first caller of `claim` only.
final class OnceFlag: Sendable {
    private let claimed = Locked(false)
    func claim() -> Bool {
        claimed.withLock { claimed in
            defer { claimed = true }
            return !claimed
        }
    }
}

/// An original in the disk cache: "EOR1", the JSON length (4 bytes, little-endian), the
/// `HTTPMetadata` as JSON, then the bytes.
enum OriginalRecord {
    static func encode(_ data: Data, _ metadata: HTTPMetadata) -> Data {
        let json = (try? JSONEncoder().encode(metadata)) ?? Data("{}".utf8)
        var record = Data("EOR1".utf8)
        withUnsafeBytes(of: UInt32(json.count).littleEndian) { record.append(contentsOf: $0) }
        record.append(json)
        record.append(data)
        return record
    }

    static func decode(_ record: Data) -> (data: Data, metadata: HTTPMetadata)? {
        guard record.count >= 8, record.prefix(4) == Data("EOR1".utf8) else { return nil }
        let start = record.startIndex
        let length = record[(start + 4)..<(start + 8)].withUnsafeBytes { Int(UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self))) }
        guard record.count >= 8 + length,
              let metadata = try? JSONDecoder().decode(HTTPMetadata.self, from: record[(start + 8)..<(start + 8 + length)]) else { return nil }
        return (Data(record[(start + 8 + length)...]), metadata)
    }
}
