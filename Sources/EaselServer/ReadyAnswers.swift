import EaselPipeline
import EaselSupport
import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypesHTTP1
import Synchronization

/// Ready answers for the warm path: an index from a request (method, target, `Accept`) to the
/// variant the router answered it with — its key in the pipeline's encoded memory tier, its ETag
/// and the answer's header fields as they were sent — so that a repeat of the same request is
/// answered in the channel pipeline (`ReadyAnswerHandler`) with no hop to the concurrency pool
/// and no router.
///
/// The index holds no bytes and decides nothing: the body of a replay is the encoded memory
/// tier's entry under the variant's key, and the replay happens only while that entry still has
/// the ETag the router sent — so the tier's freshness, eviction, replacement and purges (of the
/// image or of anything it was made with, through the pipeline's source index) end a ready
/// answer with no bookkeeping here, and every replay is a use of the tier's entry. The route
/// offers an answer (`offer`) only when the tier keeps it and its headers do not depend on the
/// time (expiring URLs cap max-age); the handler files it with the header fields the framework
/// wrote. Only unconditional GETs and HEADs without a body are replayed.
///
/// One shard per event loop: a connection's handler reads and fills its own loop's shard, so the
/// hot path takes an uncontended lock.
final class ReadyAnswers: Sendable {
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
            for name in Self.hintFields where fields[name] != nil { return nil }
            guard fields[.expect] == nil, fields[.transferEncoding] == nil, fields[.contentLength] == nil || fields[.contentLength] == "0"
            else { return nil }
            let accept = fields[.accept]
            if let accept, accept.utf8.count > Self.longestAccept { return nil }
            self.head = request.method == .head
            self.target = target
            self.accept = accept
        }

        /// The same key from a request head as the HTTP codec reads it (the handler sits before
        /// the framework's type conversion): the same rules, the same target and `Accept`. A
        /// target in absolute form (`http://host/a.jpg`) is read through the codec's own
        /// conversion, which keeps its path, as the route sees it.
        init?(_ request: HTTPRequestHead) {
            guard request.method == .GET || request.method == .HEAD else { return nil }
            if request.uri.utf8.first != UInt8(ascii: "/") {
                guard let converted = ReadyAnswers.routeView(request) else { return nil }
                self.init(converted)
                return
            }
            guard request.uri.utf8.count <= Self.longestTarget else { return nil }
            let headers = request.headers
            for name in Self.conditionalNames where headers.contains(name: name) { return nil }
            for name in Self.hintNames where headers.contains(name: name) { return nil }
            guard !headers.contains(name: "expect"), !headers.contains(name: "transfer-encoding"),
                  !headers.contains(name: ConnectionGuard.invalidHostMarker) else { return nil }
            if headers.contains(name: "content-length"), headers["content-length"] != ["0"] { return nil }
            let values = headers["accept"]
            let accept = values.isEmpty ? nil : values.count == 1 ? values[0] : values.joined(separator: ", ")
            if let accept, accept.utf8.count > Self.longestAccept { return nil }
            self.init(head: request.method == .HEAD, target: request.uri, accept: accept)
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
        static let conditionalNames = conditionalFields.map(\.canonicalName)
        /// Client Hints, `Save-Data` and `Origin`: an answer may depend on them (Client Hints,
        /// Save-Data and CORS when enabled), so requests that carry any go the normal way too.
        static let hintNames = ["sec-ch-dpr", "dpr", "sec-ch-width", "width", "sec-ch-viewport-width", "viewport-width", "save-data", "origin"]
        static let hintFields = hintNames.compactMap { HTTPField.Name($0) }
    }

    /// An indexed answer: the response's header fields as the route and the framework sent them
    /// (`Date` set anew, in its place, for the current second; each replay's own `X-Request-ID`
    /// in the place of the filed one), the variant's key in the encoded memory tier and its ETag
    /// there, and what the metrics need. Immutable: a replay hands out a reference, and a new
    /// second makes a new answer.
    final class Answer: Sendable {
        /// The fields in their order, as the HTTP encoder writes them.
        let fields: [(String, String)]
        /// Where `Date` and `X-Request-ID` are in `fields`.
        let dateIndex: Int?
        let requestIDIndex: Int?
        /// The metrics route label (`MetricsMiddleware.route`), nil when the route is not counted.
        let route: String?
        /// The encoded memory tier's key and the answer's ETag there.
        let memoryKey: String
        let etag: String
        let cost: Int
        let sequence: UInt64
        /// The second (UNIX time) of the `Date` in `fields`.
        let second: Int

        init(fields: [(String, String)], route: String?, memoryKey: String, etag: String, cost: Int, sequence: UInt64,
             second: Int) {
            self.fields = fields
            dateIndex = fields.firstIndex { $0.0.utf8.count == 4 && $0.0.lowercased() == "date" }
            requestIDIndex = fields.firstIndex { $0.0.utf8.count == 12 && $0.0.lowercased() == "x-request-id" }
            self.route = route
            self.memoryKey = memoryKey
            self.etag = etag
            self.cost = cost
            self.sequence = sequence
            self.second = second
        }

        /// This answer with another sequence number or `Date`.
        func with(sequence: UInt64? = nil, date: (second: Int, text: String)? = nil) -> Answer {
            var fields = self.fields
            if let date {
                if let dateIndex { fields[dateIndex].1 = date.text } else { fields.append(("Date", date.text)) }
            }
            return Answer(fields: fields, route: route, memoryKey: memoryKey, etag: etag, cost: cost,
                          sequence: sequence ?? self.sequence, second: date?.second ?? second)
        }
    }

    /// A request head as the route sees it, through the framework's own conversion.
    static func routeView(_ head: HTTPRequestHead) -> HTTPRequest? { try? HTTPRequest(head, secure: false, splitCookie: false) }

    /// What the route answered a request with: the variant's memory key and its ETag.
    /// (Offers are kept under the classed key, like answers: the route reads the request through
    /// the framework's types and the handler through the codec's.)
    struct Offer: Sendable {
        var memoryKey: String
        var etag: String
    }

    final class Shard: Sendable {
        let state: Locked<ShardState>
        init(limit: Int) { state = Locked(ShardState(limit: limit)) }
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
        /// Variants the route answered requests with, by request, until the handler files the
        /// answer's header fields (bounded: a request whose answer never came is dropped).
        var offered: [Key: Offer] = [:]
        static let offeredLimit = 4096

        init(limit: Int) { self.limit = limit }

        /// `Accept` values seen, by their decision class (`AcceptHeader.decisionClass`): keys
        /// are filed and looked up under the class, so two spellings of the same preferences
        /// share an answer. Bounded (browsers send a handful of values).
        var classes: [String: String] = [:]
        static let classesLimit = 256

        /// `key` with its `Accept` value replaced by its decision class.
        mutating func classed(_ key: Key) -> Key {
            guard let accept = key.accept else { return key }
            var classed = key
            if let known = classes[accept] {
                classed.accept = known
            } else {
                let decision = AcceptHeader(accept).decisionClass
                if classes.count >= Self.classesLimit { classes.removeAll(keepingCapacity: true) }
                classes[accept] = decision
                classed.accept = decision
            }
            return classed
        }

        /// Files `answer` under `key` (classed: see `classed`).
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
            let key = classed(key)
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
    }

    /// Bytes all shards may keep together (fields and keys).
    let limit: Int
    /// Bytes one shard may keep.
    let perShard: Int
    /// The encoded memory tier's bytes under this key while they still have this ETag (counting
    /// a use); nil once they are gone or replaced.
    private let current: @Sendable (_ memoryKey: String, _ etag: String) -> ByteBuffer?
    private let shards = Locked<[ObjectIdentifier: Shard]>([:])
    private let replays = Atomic<Int>(0)

    init(limit: Int, loops: Int = System.coreCount,
         current: @escaping @Sendable (_ memoryKey: String, _ etag: String) -> ByteBuffer?) {
        self.limit = limit
        self.current = current
        perShard = limit / max(1, loops)
    }

    var isEnabled: Bool { perShard > 0 }
    /// Requests answered from the index so far.
    var replayCount: Int { replays.load(ordering: .relaxed) }

    func shard(for loop: any EventLoop) -> Shard {
        shards.withLock { shards in
            if let shard = shards[ObjectIdentifier(loop)] { return shard }
            let shard = Shard(limit: perShard)
            shards[ObjectIdentifier(loop)] = shard
            return shard
        }
    }

    /// The answer for `key`, with a `Date` for now, and its body from the memory tier, while the
    /// tier still holds the same bytes (else the entry is removed).
    func replay(_ key: Key, from shard: Shard) -> (answer: Answer, body: ByteBuffer)? {
        guard let answer = shard.state.withLock({ $0.replay(key) }) else { return nil }
        guard let body = current(answer.memoryKey, answer.etag) else {
            shard.state.withLock { state in
                let key = state.classed(key)
                if state.answers[key]?.sequence == answer.sequence { state.remove(key) }
            }
            return nil
        }
        replays.add(1, ordering: .relaxed)
        return (answer, body)
    }

    /// The route answered the request `key` (a key the handler could replay: made with
    /// `Key.init?(_:)`) with `offer` (a variant the memory tier keeps): the connection's handler
    /// files it when it writes the answer's head.
    func offer(_ key: Key, _ offer: Offer, on loop: any EventLoop) {
        shard(for: loop).state.withLock { state in
            if state.offered.count >= ShardState.offeredLimit { state.offered.removeAll(keepingCapacity: true) }
            state.offered[state.classed(key)] = offer
        }
    }

    /// The route answered `key` with something that must not be indexed: an earlier offer for
    /// it is dropped.
    func withdraw(_ key: Key, on loop: any EventLoop) {
        _ = shard(for: loop).state.withLock { $0.offered.removeValue(forKey: $0.classed(key)) }
    }

    /// Files the answer to `key` with the header fields it was sent with, when the route offered
    /// its variant and these fields are that variant's (the same ETag), and they keep the
    /// connection as a replay would (no `Connection` field: a closing answer is not a template).
    func file(_ key: Key, headers: HTTPHeaders, route: String?, in shard: Shard) {
        let etag = headers.first(name: "etag")
        let closing = headers.contains(name: "connection")
        let fields = headers.map { ($0.name, $0.value) }
        shard.state.withLock { state in
            let key = state.classed(key)
            // The offer is used up whatever follows.
            guard let offer = state.offered.removeValue(forKey: key), !closing, let etag, etag == offer.etag else { return }
            var cost = 256 + key.target.utf8.count + (key.accept?.utf8.count ?? 0) + offer.memoryKey.utf8.count
            for field in fields { cost += field.0.utf8.count + field.1.utf8.count + 32 }
            state.store(key, Answer(fields: fields, route: route, memoryKey: offer.memoryKey, etag: etag, cost: cost, sequence: 0, second: -1))
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
