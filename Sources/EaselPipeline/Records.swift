import EaselCodecs
import EaselSupport
import EaselStorage
import Foundation

/// A processed variant or an encoded answer in the data stores: "EVR2", when it stops being
/// fresh (8 bytes, a little-endian Double of seconds since 1970, 0 for never), the length of its
/// format's name (1 byte), the name (`ImageEncoding.Format`'s raw value: the answer's content
/// type is read from the record, never guessed from its bytes), then the encoded image. Records
/// of the first version ("EVR1": no format) still read, with no format (an encoded answer's is
/// then told by its bytes).
enum VariantRecord {
    static func encode(_ data: Data, freshUntil: Date?, format: ImageEncoding.Format) -> Data {
        let name = Array(format.rawValue.utf8)
        var header = RecordWriter(capacity: 13 + name.count)
        header.append(text: "EVR2")
        header.append(freshUntil?.timeIntervalSince1970 ?? 0)
        header.append(UInt8(name.count))
        header.append(bytes: name)
        return header.data + data
    }

    static func decode(_ record: Data) -> (data: Data, freshUntil: Date?, format: ImageEncoding.Format?)? {
        record.withUnsafeBytes { raw -> (Data, Date?, ImageEncoding.Format?)? in
            var reader = RecordReader(raw)
            if reader.expect(text: "EVR2") {
                guard let seconds = reader.readDouble(), let length = reader.read(UInt8.self), let name = reader.read(count: Int(length)),
                      let format = ImageEncoding.Format(rawValue: String(decoding: name, as: UTF8.self)), reader.remainingCount > 0 else {
                    return nil
                }
                return (Data(reader.remaining), seconds == 0 ? nil : Date(timeIntervalSince1970: seconds), format)
            }
            reader = RecordReader(raw)
            guard reader.expect(text: "EVR1"), let seconds = reader.readDouble(), reader.remainingCount > 0 else { return nil }
            return (Data(reader.remaining), seconds == 0 ? nil : Date(timeIntervalSince1970: seconds), nil)
        }
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
        var header = RecordWriter(capacity: 8 + json.count)
        header.append(text: "EOR1")
        header.append(UInt32(json.count))
        header.append(bytes: json)
        return header.data + data
    }

    static func decode(_ record: Data) -> (data: Data, metadata: HTTPMetadata)? {
        record.withUnsafeBytes { raw -> (Data, HTTPMetadata)? in
            var reader = RecordReader(raw)
            guard reader.expect(text: "EOR1"), let length = reader.read(UInt32.self), let json = reader.read(count: Int(length)),
                  let metadata = try? JSONDecoder().decode(HTTPMetadata.self, from: Data(json)) else { return nil }
            return (Data(reader.remaining), metadata)
        }
    }
}

/// Tells work that began before or during a purge of its source not to keep what it made.
///
/// A purge marks its source's slot as started before it removes anything and as finished after.
/// Work notes the slot's mark when it begins, stores what it made, then checks the mark: if a
/// purge began since (or was under way when the work began), it removes what it stored. Either
/// the purge's removals come after the work's stores (and remove them), or the work sees the
/// purge (and removes them itself): stale bytes never outlive a purge. Work keys carry the mark,
/// so requests that arrive after a purge never join work that began before it.
///
/// Sources share a fixed table of slots by hash (bounded memory however many sources are
/// purged); two sources in one slot only cost each other a skipped store.
final class PurgeMarks: Sendable {
    struct Mark: Sendable, Hashable {
        fileprivate let slot: Int
        fileprivate let started: UInt64
        fileprivate let purging: Bool
        /// Distinguishes work keys across purges.
        var suffix: String { "|g" + String(started) + (purging ? "p" : "") }
    }

    private static let slotCount = 1_024
    private let slots = Locked([(started: UInt64, finished: UInt64)](repeating: (0, 0), count: PurgeMarks.slotCount))

    /// The slot `source` shares with others (tests find a source in another's slot with it).
    package func slot(_ source: String) -> Int { Int(UInt(bitPattern: source.hashValue) % UInt(Self.slotCount)) }

    func mark(_ source: String) -> Mark {
        let slot = slot(source)
        return slots.withLock { slots in
            Mark(slot: slot, started: slots[slot].started, purging: slots[slot].started != slots[slot].finished)
        }
    }

    /// Whether what was made under `mark` may stay stored.
    func isCurrent(_ mark: Mark) -> Bool {
        !mark.purging && slots.withLock { $0[mark.slot].started } == mark.started
    }

    /// Runs a purge of `source` between its start and finish marks.
    func purging<R>(_ source: String, _ body: () async throws(PipelineError) -> R) async throws(PipelineError) -> R {
        let slot = slot(source)
        slots.withLock { $0[slot].started &+= 1 }
        defer { slots.withLock { $0[slot].finished &+= 1 } }
        return try await body()
    }
}

/// What is known in memory of each source: an animation or a still (bounded: past 100,000
/// sources it starts again empty; the disk cache keeps a mark per animated source,
/// `StoreKey.animated`, which answers then, once per source).
final class AnimatedSources: Sendable {
    private let known = Locked([String: Bool]())
    private static let limit = 100_000

    /// Notes what a decode (or the disk's mark) found.
    func note(_ key: String, animated: Bool) {
        known.withLock { known in
            if known.count >= Self.limit, known[key] == nil { known.removeAll(keepingCapacity: true) }
            known[key] = animated
        }
    }

    /// True: an animation; false: a still; nil: not known in memory.
    func isAnimated(_ key: String) -> Bool? { known.withLock { $0[key] } }

    /// Forgets `key`; true when it was known as an animation.
    @discardableResult
    func remove(_ key: String) -> Bool { known.withLock { $0.removeValue(forKey: key) } == true }
    func contains(_ key: String) -> Bool { isAnimated(key) == true }
}

/// The file type each source decoded as (bounded: forgotten wholesale past 100,000 sources),
/// for answers in the source's own format.
final class SourceTypes: Sendable {
    private let known = Locked([String: ImageFileType]())
    private static let limit = 100_000

    func note(_ key: String, type: ImageFileType) {
        known.withLock { known in
            if known.count >= Self.limit, known[key] == nil { known.removeAll(keepingCapacity: true) }
            known[key] = type
        }
    }

    func type(of key: String) -> ImageFileType? { known.withLock { $0[key] } }
    func remove(_ key: String) { _ = known.withLock { $0.removeValue(forKey: key) } }
}

/// Bytes held by jobs that wait with memory (the decoded bitmaps of the family's formats made
/// after an answer), so that at most `limit` bytes wait at once.
final class HeldBytes: Sendable {
    private let held = Locked(0)
    let limit: Int
    init(limit: Int) { self.limit = limit }

    /// Takes `cost` bytes; false when they would pass the limit (one job is always let in).
    func enter(cost: Int) -> Bool {
        held.withLock { held in
            guard held == 0 || held + cost <= limit else { return false }
            held += cost
            return true
        }
    }

    func leave(cost: Int) { held.withLock { $0 -= cost } }
}
