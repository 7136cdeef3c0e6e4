import AsyncHTTPClient
import EaselSupport
import Foundation
import Logging
import NIOCore
import NIOHTTP1

/// Carries a purge beyond this instance: to every peer (the same `DELETE`, with the admin token
/// and `X-Easel-Purge-Relay: 1`, so that a peer purges its own tiers and relays no further), and
/// as a `BAN` to each CDN URL, naming the source's surrogate key.
///
/// Bound: each peer gets up to three tries of at most two seconds each, 0.1 s and 0.3 s apart,
/// all peers at once, so a purge is answered within about 6.5 s; every peer that answered has
/// removed the source from its memory, tables and disk before that answer. A peer that did not
/// answer is named in the purge's answer (202 Accepted, header `Easel-Purge-Unreached`), for
/// the operator to retry.
final class PurgeRelay: Sendable {
    static let relayHeader = "X-Easel-Purge-Relay"
    static let surrogateHeader = "Surrogate-Key"

    let peers: [String]
    let banURLs: [String]
    private let token: String
    private let client: HTTPClient
    private let logger = Logger(label: "easel.purge")
    static let attemptTimeout: TimeAmount = .seconds(2)
    static let pauses: [Duration] = [.milliseconds(100), .milliseconds(300)]

    init(peers: [String], banURLs: [String], token: String) {
        self.peers = peers.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
        self.banURLs = banURLs
        self.token = token
        client = HTTPClient(eventLoopGroupProvider: .singleton,
                            configuration: .init(redirectConfiguration: .disallow, timeout: .init(connect: .seconds(1))))
    }

    func shutdown() async { try? await client.shutdown() }

    /// Relays `DELETE path` to every peer and bans `surrogateKey` in every CDN; returns what could
    /// not be reached.
    func relay(path: String, surrogateKey: String) async -> [String] {
        await withTaskGroup(of: String?.self) { group in
            for peer in peers {
                group.addTask {
                    await self.send(.DELETE, to: peer + path, headers: [
                        ("Authorization", "Bearer " + self.token), (Self.relayHeader, "1")]) ? nil : peer
                }
            }
            for url in banURLs {
                group.addTask {
                    await self.send(.init(rawValue: "BAN"), to: url, headers: [(Self.surrogateHeader, surrogateKey)]) ? nil : url
                }
            }
            var unreached: [String] = []
            for await failed in group { if let failed { unreached.append(failed) } }
            return unreached.sorted()
        }
    }

    /// True once a 2xx comes back (404 from a peer is not success: it does not serve that route).
    private func send(_ method: HTTPMethod, to url: String, headers: [(String, String)]) async -> Bool {
        var request = HTTPClientRequest(url: url)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        for attempt in 0...Self.pauses.count {
            if attempt > 0 { try? await Task.sleep(for: Self.pauses[attempt - 1]) }
            do {
                let response = try await client.execute(request, timeout: Self.attemptTimeout)
                _ = try? await response.body.collect(upTo: 64 << 10)
                if (200..<300).contains(response.status.code) { return true }
                logger.warning("purge relay refused", metadata: ["url": "\(url)", "status": "\(response.status.code)"])
                if (400..<500).contains(response.status.code) { return false }  // a wrong token or route: retrying will not help
            } catch {
                logger.warning("purge relay failed", metadata: ["url": "\(url)", "attempt": "\(attempt + 1)", "error": "\(error)"])
            }
        }
        return false
    }

    /// The surrogate key of a source identity: `easel-` and 16 hex digits of its checksum. One
    /// token per source, the same on every instance.
    static func surrogateKey(forSource source: String) -> String {
        let value = Checksum.compute(Array(source.utf8))
        let hex = String(value, radix: 16)
        return "easel-" + String(repeating: "0", count: 16 - hex.count) + hex
    }
}
