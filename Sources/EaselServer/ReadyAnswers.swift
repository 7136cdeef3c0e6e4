import EaselSupport
import Foundation
import HTTPTypes
import NIOCore
import Synchronization

/// Ready answers for the warm path: complete `200` responses that the normal request path
/// produced (verified, negotiated, encoded, with every header it sends), kept so that a repeat
/// of the same request is answered in the channel pipeline (`ReadyAnswerHandler`) with no hop to
/// the concurrency pool and no router.
///
/// Nothing here decides what a request gets: an answer is stored only when the route marked it
/// storable (see `fillField`), and it is replayed only for a request with the same method, target
/// (path and query) and `Accept`, unconditional and without a body, and only while the
/// pipeline's encoded memory tier still holds the same bytes under the answer's key (`isCurrent`):
/// an entry that expired (the origin's freshness), was evicted or replaced takes its ready answer
/// with it, and every replay is a use of the tier's entry. A stored answer names the
/// sources it was made from (the image and its watermark), and `invalidate(sources:)` — which
/// every purge calls — removes the answers made from them and rejects answers still being made
/// when it ran (`epoch`). Answers whose headers depend on the time (expiring URLs cap max-age)
/// are never stored. The server's configuration does not change while it runs; a new server
/// starts with an empty table.
///
/// One shard per event loop: a connection's handler reads and fills its own loop's shard, so the
/// hot path takes an uncontended lock; a purge visits every shard.
final class ReadyAnswers: Sendable {
    /// The request header the handler puts on a request it could answer next time (any such
    /// header from a client is removed first), and the response header the route answers with
    /// when the answer may be kept (removed before it is sent).
    static let fillField = HTTPField.Name("Easel-Ready-Answer")!

    struct Key: Hashable, Sendable {
        var head: Bool
        var target: String
        var accept: String?

        /// A request's key, or nil when a ready answer could not be what the route would send:
        /// not a GET or HEAD, conditional or ranged, a target not in origin form (`/…`), a
        /// target or `Accept` too long to keep — or when a body may follow (its head is held
        /// until its end, and a client waiting on `Expect: 100-continue` or sending a body slowly
        /// must not be kept waiting).
        init?(_ request: HTTPRequest) {
            guard request.method == .get || request.method == .head, let target = request.path, target.utf8.first == UInt8(ascii: "/"),
                  target.utf8.count <= Self.longestTarget else { return nil }
            let fields = request.headerFields
            for name in Self.conditionalFields where fields[name] != nil { return nil }
            guard fields[.expect] == nil, fields[.transferEncoding] == nil, fields[.contentLength] == nil || fields[.contentLength] == "0"
            else { return nil }
            let accept = fields[.accept]
            if let accept, accept.utf8.count > Self.longestAccept { return nil }
            self.head = request.method == .head
            self.target = target
            self.accept = accept
        }

        init(head: Bool, target: String, accept: String?) {
            self.head = head
            self.target = target
            self.accept = accept
        }

        static let longestTarget = 2048
        static let longestAccept = 1024
        /// Requests carrying any of these go the normal way (the route answers `If-None-Match`
        /// with 304; the others it ignores, but a replay need not know that).
        static let conditionalFields: [HTTPField.Name] = [.ifNoneMatch, .ifModifiedSince, .ifMatch, .ifUnmodifiedSince, .ifRange, .range]
    }

    /// A stored answer: the response's header fields as the route and the framework sent them
    /// (`Date` set anew, in its place, for the current second), the body (shared with the memory
    /// tier's buffer, not copied), and what the metrics need. Immutable: a replay hands out a
    /// reference, and a new second makes a new answer.
    final class Answer: Sendable {
        let fields: HTTPFields
        let body: ByteBuffer?
        /// The metrics route label (`MetricsMiddleware.route`), nil when the route is not counted.
        let route: String?
        /// Hashes of the source keys the answer was made from.
        let sources: [Int]
        /// The encoded memory tier's key and the answer's ETag there.
        let memoryKey: String
        let etag: String
        let cost: Int
        let sequence: UInt64
        /// The second (UNIX time) of the `Date` in `fields`.
        let second: Int

        init(fields: HTTPFields, body: ByteBuffer?, route: String?, sources: [Int], memoryKey: String, etag: String, cost: Int,
             sequence: UInt64, second: Int) {
            self.fields = fields
            self.body = body
            self.route = route
            self.sources = sources
            self.memoryKey = memoryKey
            self.etag = etag
            self.cost = cost
            self.sequence = sequence
            self.second = second
        }

        /// This answer with another sequence number or `Date`.
        func with(sequence: UInt64? = nil, date: (second: Int, text: String)? = nil) -> Answer {
            var fields = self.fields
            if let date { fields[.date] = date.text }
            return Answer(fields: fields, body: body, route: route, sources: sources, memoryKey: memoryKey, etag: etag, cost: cost,
                          sequence: sequence ?? self.sequence, second: date?.second ?? second)
        }
    }

    /// What the route says when it marks an answer storable: the epoch it started in, the encoded
    /// memory tier's key of the answer, and its sources.
    struct Ticket: Equatable {
        var epoch: UInt64
        var memoryKey: String
        var sources: [Int]

        /// `epoch base64(memoryKey) source…` (the key in base64: any bytes, a valid field value).
        var headerValue: String {
            ([String(epoch), Data(memoryKey.utf8).base64EncodedString()] + sources.map { String($0) }).joined(separator: " ")
        }

        init(epoch: UInt64, memoryKey: String, sources: [Int]) {
            self.epoch = epoch
            self.memoryKey = memoryKey
            self.sources = sources
        }

        init?(headerValue: String) {
            let words = headerValue.split(separator: " ")
            guard words.count >= 2, let epoch = UInt64(words[0]), let key = Data(base64Encoded: String(words[1])) else { return nil }
            var sources: [Int] = []
            for number in words.dropFirst(2) {
                guard let value = Int(number) else { return nil }
                sources.append(value)
            }
            self.init(epoch: epoch, memoryKey: String(decoding: key, as: UTF8.self), sources: sources)
        }
    }

    final class Shard: Sendable {
        let state: Mutex<ShardState>
        init(limit: Int) { state = Mutex(ShardState(limit: limit)) }
    }

    struct ShardState: Sendable {
        let limit: Int
        var answers: [Key: Answer] = [:]
        /// Keys in the order they were stored (with the sequence they were stored under; a
        /// replaced or removed answer leaves a stale pair, skipped when reached).
        var order: [(key: Key, sequence: UInt64)] = []
        var orderStart = 0
        var bytes = 0
        var sequence: UInt64 = 0
        var date = HTTPDate()

        init(limit: Int) { self.limit = limit }

        mutating func store(_ key: Key, _ answer: Answer) {
            guard answer.cost <= limit else { return }
            remove(key)
            sequence += 1
            let answer = answer.with(sequence: sequence)
            answers[key] = answer
            order.append((key, sequence))
            bytes += answer.cost
            // Oldest first, until the shard is within its budget.
            while bytes > limit, orderStart < order.count {
                let (oldest, stored) = order[orderStart]
                orderStart += 1
                if answers[oldest]?.sequence == stored { remove(oldest) }
            }
            // Replaced and removed answers leave stale pairs: drop them once they outnumber the rest.
            if order.count - orderStart > 2 * answers.count + 64 {
                order = order[orderStart...].filter { answers[$0.key]?.sequence == $0.sequence }
                orderStart = 0
            }
        }

        /// The answer for `key`, its `Date` the current second's.
        mutating func replay(_ key: Key) -> Answer? {
            guard let answer = answers[key] else { return nil }
            let now = date.now()
            guard answer.second != now.second else { return answer }
            let current = answer.with(date: now)
            answers[key] = current
            return current
        }

        mutating func remove(_ key: Key) {
            if let old = answers.removeValue(forKey: key) { bytes -= old.cost }
        }

        mutating func removeAll(where shouldRemove: (Answer) -> Bool) {
            for (key, answer) in answers where shouldRemove(answer) { remove(key) }
            if answers.isEmpty {
                order.removeAll()
                orderStart = 0
            }
        }
    }

    /// Bytes all shards may keep together (bodies, fields and keys).
    let limit: Int
    /// Bytes one shard may keep.
    let perShard: Int
    /// Whether the encoded memory tier still holds these bytes under this key (counting a use).
    private let isCurrent: @Sendable (_ memoryKey: String, _ etag: String) -> Bool
    private let shards = Mutex<[ObjectIdentifier: Shard]>([:])
    /// Incremented by every purge: an answer whose route began in an older epoch is not stored.
    private let currentEpoch = Atomic<UInt64>(0)
    /// A random number per process: the handler's request mark, which a client cannot guess.
    let nonce: String
    private let replays = Atomic<Int>(0)

    init(limit: Int, loops: Int = System.coreCount, isCurrent: @escaping @Sendable (_ memoryKey: String, _ etag: String) -> Bool) {
        self.limit = limit
        self.isCurrent = isCurrent
        perShard = limit / max(1, loops)
        nonce = String(UInt64.random(in: 1...UInt64.max))
    }

    var isEnabled: Bool { perShard > 0 }
    var epoch: UInt64 { currentEpoch.load(ordering: .acquiring) }
    /// Requests answered from the table so far.
    var replayCount: Int { replays.load(ordering: .relaxed) }

    func shard(for loop: any EventLoop) -> Shard {
        shards.withLock { shards in
            if let shard = shards[ObjectIdentifier(loop)] { return shard }
            let shard = Shard(limit: perShard)
            shards[ObjectIdentifier(loop)] = shard
            return shard
        }
    }

    /// The hash a source key is named by in tickets (this process's `Hasher`: tickets never
    /// leave it; a collision only removes one more answer than needed).
    static func sourceHash(_ sourceKey: String) -> Int { sourceKey.hashValue }

    /// The answer for `key`, with a `Date` for now, while the memory tier still holds it (else it
    /// is removed).
    func replay(_ key: Key, from shard: Shard) -> Answer? {
        guard let answer = shard.state.withLock({ $0.replay(key) }) else { return nil }
        guard isCurrent(answer.memoryKey, answer.etag) else {
            shard.state.withLock { state in
                if state.answers[key]?.sequence == answer.sequence { state.remove(key) }
            }
            return nil
        }
        replays.add(1, ordering: .relaxed)
        return answer
    }

    /// Keeps an answer the route marked with `ticket`, unless a purge ran since its route began.
    func store(_ key: Key, fields: HTTPFields, body: ByteBuffer?, route: String?, ticket: Ticket, in shard: Shard) {
        var cost = 256 + key.target.utf8.count + (key.accept?.utf8.count ?? 0) + (body?.readableBytes ?? 0)
        for field in fields { cost += field.name.rawName.utf8.count + field.value.utf8.count + 32 }
        let answer = Answer(fields: fields, body: body, route: route, sources: ticket.sources, memoryKey: ticket.memoryKey,
                            etag: fields[.eTag] ?? "", cost: cost + ticket.memoryKey.utf8.count, sequence: 0, second: -1)
        shard.state.withLock { state in
            // Checked under the shard's lock: a purge advances the epoch before it visits the
            // shards, so an answer from before it is either refused here or removed there.
            guard ticket.epoch == currentEpoch.load(ordering: .acquiring) else { return }
            state.store(key, answer)
        }
    }

    /// Removes every answer made from one of `sourceKeys` and refuses the ones in the making.
    func invalidate(sources sourceKeys: [String]) {
        currentEpoch.add(1, ordering: .acquiringAndReleasing)
        let hashes = Set(sourceKeys.map(Self.sourceHash))
        let all = shards.withLock { Array($0.values) }
        for shard in all {
            shard.state.withLock { $0.removeAll { !hashes.isDisjoint(with: $0.sources) } }
        }
    }

    /// Answers kept and their bytes, over all shards.
    var usage: (answers: Int, bytes: Int) {
        let all = shards.withLock { Array($0.values) }
        return all.reduce((0, 0)) { total, shard in
            shard.state.withLock { (total.0 + $0.answers.count, total.1 + $0.bytes) }
        }
    }
}

/// An HTTP date (RFC 9110 IMF-fixdate), formatted once per second.
struct HTTPDate: Sendable {
    private var second = -1
    private var text = ""

    /// The current second and its date.
    mutating func now() -> (second: Int, text: String) {
        let current = WallClock.seconds()
        if current != second {
            second = current
            text = Self.format(current)
        }
        return (second, text)
    }

    static func format(_ seconds: Int) -> String {
        let parts = WallClock.utc(seconds)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(days[parts.weekday]), \(two(parts.day)) \(months[parts.month]) \(parts.year) "
            + "\(two(parts.hour)):\(two(parts.minute)):\(two(parts.second)) GMT"
    }
}
