import EaselCodecs
import EaselSupport
import EaselTestSupport
import Foundation
import Testing

extension ServeUnderLoad {
    /// `easel serve --memory-budget` as its own process: many concurrent thumbnails of a large
    /// source that decodes at full size (a BMP does not shrink on load) are all answered while what
    /// the work adds to the process's resident memory (its peak, `VmHWM` from `/proc`, over its
    /// resident memory before the load: the budget governs the work, not the program's own
    /// footprint, which a debug or sanitizer build inflates) stays under the budget; `/metrics`
    /// shows the budget and the most its estimates reserved at once.
    @Suite("easel serve's memory budget", .timeLimit(.minutes(3)))
    struct MemoryBudgetServeTests {
        /// `easel serve` on `origin` with its `config.json` and a 300 MiB budget, as its own process.
        static func serve(origin: TemporaryDirectory, cache: TemporaryDirectory) async throws -> ListeningProcess {
            try await BlockingIOPool.shared.run {
                try ListeningProcess(executable: builtProduct("easel"), arguments: [
                    "serve", "--port", "0", "--cache-dir", cache.path, "--origin", origin.path, "--config", origin.child("config.json").path,
                    "--allow-unsigned-ad-hoc", "--no-access-log", "--memory-budget", "300M"])
            }
        }

        /// One request on a connection of its own, its whole answer read within `seconds`.
        static func ask(_ target: String, port: Int, within seconds: Int) throws -> String {
            let socket = try RawSocket(port: port)
            try socket.send("GET \(target) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            return socket.readUntilClosed(within: .seconds(seconds)).text
        }

        /// Every target asked for at once, each on a thread of its own; the answers.
        static func atOnce(_ targets: [String], ask: @escaping @Sendable (String) throws -> String) async throws -> [String] {
            try await withThrowingTaskGroup(of: String.self) { group in
                for target in targets { group.addTask { try await onOwnThread { try ask(target) } } }
                var answers: [String] = []
                for try await answer in group { answers.append(answer) }
                return answers
            }
        }

        @Test func twentyConcurrentLargeDecodesStayUnderTheBudget() async throws {
            let origin = try TemporaryDirectory(), cache = try TemporaryDirectory()
            // 2400 × 1600: 11.5 MB of file, 15 MB decoded, about 35 MB estimated per decode.
            try ImageEncoder.encode(photoLike(width: 2400, height: 1600), as: .bmp).write(to: origin.child("big.bmp"))
            try Data(#"{"maxSourceBytes": 60000000, "processingConcurrency": 16, "maxQueue": 64, "requestTimeout": 150}"#.utf8)
                .write(to: origin.child("config.json"))
            let budget = 300 << 20
            let server = try await Self.serve(origin: origin, cache: cache)
            let port = server.port
            @Sendable func ask(_ target: String) throws -> String { try Self.ask(target, port: port, within: 120) }
            // The program before the load: started, and one small answer made (its code paths and
            // libraries in memory).
            #expect(try await BlockingIOPool.shared.run { try ask("/images/w=10,h=10,f=png/big.bmp") }.hasPrefix("HTTP/1.1 200"))
            let before = try #require(residentBytes(of: server.process.processIdentifier))
            // Twenty sizes: twenty decodes, all asked for at once, each on a thread of its own.
            let answers = try await Self.atOnce((0..<20).map { "/images/w=\(100 + $0 * 10),h=\(100 + $0 * 10),f=png/big.bmp" }, ask: ask)
            #expect(answers.count == 20 && answers.allSatisfy { $0.hasPrefix("HTTP/1.1 200") },
                    "\(answers.map { String($0.prefix(60)) })")
            let peak = try #require(residentBytes(of: server.process.processIdentifier, field: "VmHWM:"))
            #expect(peak - before < budget, "the load added \((peak - before) >> 20) MiB to \(before >> 20) MiB; budget 300 MiB")
            let metrics = try await BlockingIOPool.shared.run { try ask("/metrics") }
            #expect(metrics.contains("easel_memory_budget_bytes \(budget)"))
            let reserved = metrics.split(separator: "\n").first { $0.hasPrefix("easel_memory_reserved_peak_bytes ") }
                .flatMap { Double($0.split(separator: " ").last ?? "") }
            #expect(reserved.map { $0 > 0 && $0 <= Double(budget) } == true, "\(String(describing: reserved))")
            server.process.terminate()
            #expect(try await BlockingIOPool.shared.run { server.waitForExit(within: .seconds(30)) })
        }

        /// Twenty 49 MP PNGs (7000², what phones take; each its own file, so twenty decodes, no
        /// shared work), thumbnailed at once under a 300 MiB budget: each shrinks while it is
        /// decoded (1/8, 875² pixels), so all are answered and the load adds less than the budget
        /// to the process's peak memory (a full decode of one would be 196 MB).
        @Test func twentyConcurrentFortyNineMegapixelPNGsStayUnderTheBudget() async throws {
            let origin = try TemporaryDirectory(), cache = try TemporaryDirectory()
            try BigSourceTests.writeHugePNG(side: 7000, to: origin.child("photo0.png"))
            for index in 1..<20 { try FileManager.default.linkItem(at: origin.child("photo0.png"), to: origin.child("photo\(index).png")) }
            try Data(#"{"processingConcurrency": 16, "maxQueue": 64, "requestTimeout": 150}"#.utf8).write(to: origin.child("config.json"))
            let budget = 300 << 20
            let server = try await Self.serve(origin: origin, cache: cache)
            let port = server.port
            @Sendable func ask(_ target: String) throws -> String { try Self.ask(target, port: port, within: 150) }
            // The program before the load, with its PNG path warm: a small PNG answered.
            try BigSourceTests.writeHugePNG(side: 64, to: origin.child("small.png"))
            #expect(try await BlockingIOPool.shared.run { try ask("/images/w=10,h=10,f=png/small.png") }.hasPrefix("HTTP/1.1 200"))
            let before = try #require(residentBytes(of: server.process.processIdentifier))
            let answers = try await Self.atOnce((0..<20).map { "/images/w=256,h=256,f=jpeg/photo\($0).png" }, ask: ask)
            #expect(answers.count == 20 && answers.allSatisfy { $0.hasPrefix("HTTP/1.1 200") }, "\(answers.map { String($0.prefix(60)) })")
            let peak = try #require(residentBytes(of: server.process.processIdentifier, field: "VmHWM:"))
            #expect(peak - before < budget, "the load added \((peak - before) >> 20) MiB to \(before >> 20) MiB; budget 300 MiB")
            server.process.terminate()
            #expect(try await BlockingIOPool.shared.run { server.waitForExit(within: .seconds(30)) })
        }
    }
}
