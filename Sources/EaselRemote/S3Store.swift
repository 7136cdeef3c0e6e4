import Crypto
import EaselStorage
import EaselSupport
import Foundation
import Logging
import Metrics
import Synchronization

/// A `DataStore` in an S3 bucket: the result tier several servers share.
///
/// - Object names are hashes: `PREFIX` + SHA-256 of the key's group (its source, see
///   `KeyPrefix.group`) + `/` + SHA-256 of the key. Hostile or long keys become fixed-length
///   names, and everything made from one source is one listing away
///   (`removeValues(withKeyPrefix:)` takes whole groups only).
/// - Each object carries its key, expiry and a checksum (see `ObjectRecord`); a read verifies
///   them, and a damaged or misplaced object is a miss and is deleted.
/// - Reads have their own short time limit (`readTimeout`): a slow store is a miss, and the
///   caller does the work itself. Every failure is counted (`easel_shared_tier_total` by
///   operation and outcome, and `statistics`) and logged; none is fatal to the caller, who
///   treats a thrown error as a miss.
public final class S3Store: DataStore {
    /// The bucket, and the prefix every object name starts with.
    public let location: S3Location
    /// The client requests go through; the store does not shut it down.
    public let client: S3Client
    /// Limit for one read (a miss after it).
    public let readTimeout: Duration
    /// Objects larger than this are refused on write and read.
    public let maximumObjectBytes: Int
    public var storeName: String { "s3" }

    /// Most writes in flight at once; a write past it is dropped and counted (`writesDropped`):
    /// writes are made after answers, and a slow store must not pile them up in memory.
    public let maximumPendingWrites: Int

    /// Counts since start, for tests and the server's status.
    public struct Statistics: Sendable, Equatable {
        /// Reads that found a valid, unexpired object.
        public var hits = 0
        /// Reads that found no object, or an expired one.
        public var misses = 0
        /// Reads that found an object failing its checks (checksum, format or key): answered as
        /// a miss (not counted in `misses`), and the object is deleted in the background.
        public var damaged = 0
        /// Reads that failed: network, time limit, service error or an object over the limit.
        public var readErrors = 0
        /// Objects stored.
        public var writes = 0
        /// Writes that failed.
        public var writeErrors = 0
        /// Writes dropped because `maximumPendingWrites` were already in flight (values over
        /// `maximumObjectBytes` are skipped without being counted).
        public var writesDropped = 0
        /// Objects deleted by removals that succeeded in full (names deleted, whether or not an
        /// object was there).
        public var removals = 0
    }

    private let counts = Locked(Statistics())
    private let pendingWrites = Locked(0)
    private let background = BackgroundTasks()

    /// Waits for removals of damaged objects started by reads (before the client shuts down).
    public func drainBackgroundWork() async { await background.drain() }
    private let counters: [String: Counter]
    private let logger = Logger(label: "easel.s3")

    /// A store in `location` through `client`, with a 1-second read limit, 64 MiB objects and
    /// 64 pending writes at most by default.
    public init(location: S3Location, client: S3Client, readTimeout: Duration = .seconds(1), maximumObjectBytes: Int = 64 << 20,
                maximumPendingWrites: Int = 64) {
        self.location = location
        self.client = client
        self.readTimeout = readTimeout
        self.maximumObjectBytes = maximumObjectBytes
        self.maximumPendingWrites = maximumPendingWrites
        var counters: [String: Counter] = [:]
        for (operation, outcome) in [("read", "hit"), ("read", "miss"), ("read", "damaged"), ("read", "error"),
                                     ("write", "ok"), ("write", "error"), ("write", "dropped"), ("remove", "ok"), ("remove", "error")] {
            counters[operation + "." + outcome] = Counter(label: "easel_shared_tier_total", dimensions: [("operation", operation), ("outcome", outcome)])
        }
        self.counters = counters
    }

    /// A snapshot of the counts since the store was made.
    public var statistics: Statistics { counts.withLock { $0 } }

    private func count(_ operation: String, _ outcome: String, _ update: (inout Statistics) -> Void) {
        counts.withLock { update(&$0) }
        counters[operation + "." + outcome]?.increment()
    }

    // MARK: Names

    /// The object name of `key`.
    public func objectName(forKey key: String) -> String {
        groupPrefix(KeyPrefix.group(of: key) ?? key[...]) + Self.digest(key[...])
    }

    private func groupPrefix(_ group: Substring) -> String { location.prefix + Self.digest(group) + "/" }

    private static func digest(_ text: Substring) -> String {
        SignatureV4.hex(SHA256.hash(data: Data(text.utf8)))
    }

    // MARK: DataStore

    public func data(forKey key: String) async throws -> Data? {
        let name = objectName(forKey: key)
        let bucket = location.bucket, limit = maximumObjectBytes + ObjectRecord.overhead(key: key), client = self.client
        let object: Data?
        do {
            object = try await withTimeLimit(readTimeout, timedOut: S3Error.timedOut(seconds: S3Client.seconds(readTimeout)),
                                             cancelled: .network("cancelled")) { () async throws(S3Error) -> Data? in
                try await client.data(bucket: bucket, key: name, maximumBytes: limit)
            }
        } catch {
            count("read", "error") { $0.readErrors += 1 }
            logger.warning("shared tier read failed; doing the work locally", metadata: ["object": "\(name)", "error": "\(error)"])
            throw error
        }
        guard let object else {
            count("read", "miss") { $0.misses += 1 }
            return nil
        }
        guard let (storedKey, expiresAt, payload) = ObjectRecord.decode(object), storedKey == key else {
            count("read", "damaged") { $0.damaged += 1 }
            logger.warning("damaged object in the shared tier: removed", metadata: ["object": "\(name)"])
            // Removed in the background: the answer does not wait for it.
            background.run { try? await client.delete(bucket: bucket, key: name) }
            return nil
        }
        if let expiresAt, expiresAt < Date() {
            count("read", "miss") { $0.misses += 1 }
            return nil
        }
        count("read", "hit") { $0.hits += 1 }
        return payload
    }

    public func set(_ data: Data, forKey key: String, expiresAt: Date?) async throws {
        guard data.count <= maximumObjectBytes else { return }
        let name = objectName(forKey: key)
        let admitted = pendingWrites.withLock { pending in
            guard pending < maximumPendingWrites else { return false }
            pending += 1
            return true
        }
        guard admitted else {
            count("write", "dropped") { $0.writesDropped += 1 }
            return
        }
        defer { pendingWrites.withLock { $0 -= 1 } }
        do {
            try await client.put(bucket: location.bucket, key: name, data: ObjectRecord.encode(key: key, expiresAt: expiresAt, payload: data))
            count("write", "ok") { $0.writes += 1 }
        } catch {
            count("write", "error") { $0.writeErrors += 1 }
            logger.warning("shared tier write failed", metadata: ["object": "\(name)", "error": "\(error)"])
            throw error
        }
    }

    public func removeValue(forKey key: String) async throws {
        try await remove([objectName(forKey: key)])
    }

    /// Removes a whole group (a prefix that `KeyPrefix.group` reads as exactly one group);
    /// any other prefix is refused (`S3Error.invalidLocation`), as hashed names keep no order.
    public func removeValues(withKeyPrefix prefix: String) async throws {
        guard let group = KeyPrefix.group(of: prefix), group.utf8.count == prefix.utf8.count else {
            throw S3Error.invalidLocation("a key prefix that is not one whole group: \(prefix)")
        }
        let names: [String]
        do {
            names = try await client.allKeys(bucket: location.bucket, prefix: groupPrefix(group))
        } catch {
            count("remove", "error") { _ in }
            logger.warning("shared tier listing failed", metadata: ["error": "\(error)"])
            throw error
        }
        try await remove(names)
    }

    /// Deletes objects, eight at a time.
    private func remove(_ names: [String]) async throws {
        let client = self.client, bucket = location.bucket
        var failure: S3Error?
        var index = 0
        while index < names.count {
            let batch = names[index..<min(names.count, index + 8)]
            index += batch.count
            let errors = await withTaskGroup(of: S3Error?.self) { group in
                for name in batch {
                    group.addTask {
                        do throws(S3Error) { try await client.delete(bucket: bucket, key: name); return nil } catch { return error }
                    }
                }
                var errors: [S3Error] = []
                for await error in group { if let error { errors.append(error) } }
                return errors
            }
            failure = failure ?? errors.first
        }
        if let failure {
            count("remove", "error") { _ in }
            logger.warning("shared tier removal failed", metadata: ["error": "\(failure)"])
            throw failure
        }
        count("remove", "ok") { $0.removals += names.count }
    }
}

/// The bytes of one shared-tier object: `"EASO"`, a version byte, the key's length (UInt32) and
/// UTF-8 bytes, the expiry (Int64 milliseconds since 1970, 0 for none), the payload, then a
/// checksum (UInt64) of everything before it. All integers little-endian.
enum ObjectRecord {
    static let magic: [UInt8] = Array("EASO".utf8)
    static let version: UInt8 = 1

    static func overhead(key: String) -> Int { magic.count + 1 + 4 + key.utf8.count + 8 + 8 }

    static func encode(key: String, expiresAt: Date?, payload: Data) -> Data {
        var writer = RecordWriter(capacity: overhead(key: key) + payload.count)
        writer.append(bytes: magic)
        writer.append(version)
        writer.append(UInt32(key.utf8.count))
        writer.append(text: key)
        writer.append(Int64(checked: ((expiresAt?.timeIntervalSince1970 ?? 0) * 1000).rounded()))
        writer.append(bytes: payload)
        let checksum = writer.bytes.withUnsafeBytes { Checksum.compute($0) }
        writer.append(checksum)
        return writer.data
    }

    static func decode(_ data: Data) -> (key: String, expiresAt: Date?, payload: Data)? {
        data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> (String, Date?, Data)? in
            guard raw.count >= magic.count + 1 + 4 + 8 + 8 else { return nil }
            let body = UnsafeRawBufferPointer(rebasing: raw[..<(raw.count - 8)])
            var tail = RecordReader(UnsafeRawBufferPointer(rebasing: raw[(raw.count - 8)...]))
            guard tail.read(UInt64.self) == Checksum.compute(body) else { return nil }
            var reader = RecordReader(body)
            guard let head = reader.read(count: magic.count), Array(head) == magic, reader.read(UInt8.self) == version,
                  let keyLength = reader.read(UInt32.self), let keyBytes = reader.read(count: Int(keyLength)),
                  let expiry = reader.read(Int64.self) else { return nil }
            let key = String(decoding: keyBytes, as: UTF8.self)
            return (key, expiry == 0 ? nil : Date(timeIntervalSince1970: Double(expiry) / 1000), Data(reader.remaining))
        }
    }
}
