import AsyncHTTPClient
import EaselCodecs
import EaselSupport
import EaselTestSupport
import Foundation
import NIOCore
import Testing

/// Round 4's hostile documents against `easel serve` as its own process (render workers on, as
/// shipped): every SVG and PDF attack through every route that renders is a 4xx, the server
/// answers `/health` after each, a runaway render whose client left stops (the process tree's CPU
/// back to idle within 2 s), and the server's own memory stays small.
@Suite("easel serve survives hostile documents", .serialized, .timeLimit(.minutes(5)))
struct HostileDocumentTests {
    static let files: [(name: String, data: Data)] = [
        ("convolution.svg", HostileDocuments.convolution), ("selectors.svg", HostileDocuments.nestedSelectors),
        ("font.svg", HostileDocuments.hugeFont), ("octaves.svg", HostileDocuments.octaves), ("text.svg", HostileDocuments.text),
        ("masks.svg", HostileDocuments.masks), ("forms.pdf", HostileDocuments.nestedForms), ("saves.pdf", HostileDocuments.saves),
    ]

    /// Every route that renders a document: named, ad-hoc, imgproxy, thumbor, /info and
    /// imgproxy's info, and as a mark (native `wmu`, thumbor's `watermark()`).
    static func routes(_ name: String) -> [String] {
        let base64 = Data(name.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        return ["/images/thumb/\(name)", "/images/w=120,h=80,fit=fill/\(name)", "/imgproxy/insecure/rs:fit:120:80/plain/local:///\(name)",
                "/thumbor/unsafe/90x60/\(name)", "/info/\(name)", "/imgproxy/info/insecure/plain/local:///\(name)",
                "/images/w=120,h=80,wmu=\(base64):1:nw:0:0/plain.png",
                "/thumbor/unsafe/120x80/filters:watermark(\(name),0,0,0)/plain.png"]
    }

    static func startServer(requestTimeout: Int = 60) async throws -> (ChildServer, TemporaryDirectory, TemporaryDirectory) {
        let origin = try TemporaryDirectory(), cache = try TemporaryDirectory()
        for file in files { try file.data.write(to: origin.child(file.name)) }
        try HostileDocuments.slow.write(to: origin.child("slow.svg"))
        let plain = try ImageEncoder.encode(Bitmap(width: 200, height: 200, pixelFormat: .rgba8), as: .png())
        try plain.write(to: origin.child("plain.png"))
        try plain.write(to: origin.child("plain-again.png"))
        let config = origin.child("easel.json")
        try Data(#"{"allowUnsignedAdHoc": true, "requestTimeout": \#(requestTimeout), "maxAdHocSize": 2048}"#.utf8).write(to: config)
        let server = try await BlockingIOPool.shared.run {
            try ChildServer(arguments: ["--origin", origin.path, "--cache-dir", cache.path, "--config", config.path])
        }
        return (server, origin, cache)
    }

    @Test func everyAttackThroughEveryRenderingRouteIsA4xxAndTheServerAnswersAfterEach() async throws {
        let (server, origin, cache) = try await Self.startServer()
        defer { withExtendedLifetime((origin, cache)) {} }
        var failures: [String] = []
        for file in Self.files {
            for path in Self.routes(file.name) {
                let (status, body, _) = try await server.get(path)
                if !(400..<500).contains(status) { failures.append("\(path): \(status) \(String(decoding: body.prefix(200), as: UTF8.self))") }
                #expect(server.process.isRunning, "the server died on \(path)")
                let health = try await server.get("/health")
                #expect(health.status == 200, "health after \(path)")
            }
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
        // The documents were refused by the budgets or rendered in workers: the server itself
        // never held a renderer's memory (the two-million-q PDF took it to 3–6 GB before).
        let peak = try #require(residentBytes(of: server.process.processIdentifier, field: "VmHWM:"))
        #expect(peak < 600 << 20, "the server's peak RSS: \(peak >> 20) MiB")
    }

    @Test func aRunawayRenderStopsWhenItsClientLeaves() async throws {
        let (server, origin, cache) = try await Self.startServer()
        defer { withExtendedLifetime((origin, cache)) {} }
        let pid = server.process.processIdentifier
        // A render of over a minute of CPU, abandoned after one second by its client.
        let port = server.port
        let client = try await BlockingIOPool.shared.run { try RawSocket(port: port) }
        try await BlockingIOPool.shared.run {
            try client.send("GET /images/w=2000,h=2000/slow.svg HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        }
        // Over a quarter of a second, the CPU-seconds the process tree spends.
        func spent() async -> Double {
            let before = ProcessTree.cpuSeconds(of: pid)
            try? await Task.sleep(for: .milliseconds(250))  // the measuring window, not a wait for a result
            return ProcessTree.cpuSeconds(of: pid) - before
        }
        // The render runs once a worker spends CPU (bounded: 30 s).
        let started = ContinuousClock.now
        var busy = false
        while !busy, ContinuousClock.now - started < .seconds(30) { busy = await spent() > 0.15 && !ProcessTree.children(of: pid).isEmpty }
        #expect(busy, "a render worker was busy")
        client.shutdownBoth()
        let left = ContinuousClock.now
        // Idle: under 0.1 CPU-seconds over a quarter of a second (a render spends 0.25), within 2 s
        // of the client leaving.
        var idle = false
        while !idle, ContinuousClock.now - left < .seconds(2) { idle = await spent() < 0.1 }
        #expect(idle, "the process tree was still busy 2 s after the client left")
        #expect(ProcessTree.children(of: pid).allSatisfy { !ProcessTree.isBusy($0) }, "no worker still renders")
        let health = try await server.get("/health")
        #expect(health.status == 200)
        // A plain document renders after it.
        try HostileDocuments.plain.write(to: origin.child("after.svg"))
        #expect(try await server.get("/images/thumb/after.svg").status == 200)
    }

    @Test func aTextMarkAfterAHugeFontRendersAsBefore() async throws {
        let (server, origin, cache) = try await Self.startServer()
        defer { withExtendedLifetime((origin, cache)) {} }
        func mark(_ markup: String, on source: String = "plain.png") -> String {
            let text = Data(markup.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            return "/images/w=200,h=200,f=png,wmt=\(text):1:nw:10:10/\(source)"
        }
        let before = try await server.get(mark("Easel"))
        #expect(before.status == 200)
        for huge in [#"<span font="1000000">A</span>"#, #"<span size="1000000000">A</span>"#,
                     String(repeating: "<big>", count: 200) + "A" + String(repeating: "</big>", count: 200)] {
            let refused = try await server.get(mark(huge))
            #expect((400..<500).contains(refused.status), "\(huge.prefix(40)): \(refused.status)")
        }
        // The same text on a copy of the source (so not a cached answer): the same pixels.
        let after = try await server.get(mark("Easel", on: "plain-again.png"))
        #expect(after.status == 200 && after.body == before.body, "the same pixels after the huge fonts")
    }
}

/// A process and its children, read from /proc.
enum ProcessTree {
    /// The IDs of `pid`'s children.
    static func children(of pid: Int32) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(Int32.init).filter { stat($0)?.parent == pid }
    }

    /// CPU seconds of `pid` (with its reaped children) and its living children.
    static func cpuSeconds(of pid: Int32) -> Double {
        let own = stat(pid).map { $0.cpu + $0.reapedChildren } ?? 0
        return own + children(of: pid).compactMap { stat($0)?.cpu }.reduce(0, +)
    }

    /// Whether a process is running on a CPU now (state R).
    static func isBusy(_ pid: Int32) -> Bool { stat(pid)?.state == "R" }

    private static func stat(_ pid: Int32) -> (parent: Int32, state: String, cpu: Double, reapedChildren: Double)? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        // After "(comm)": state ppid … utime(14) stime(15) cutime(16) cstime(17), counted from 1.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 15, let parent = Int32(fields[1]) else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        func value(_ index: Int) -> Double { (Double(fields[index]) ?? 0) / ticks }
        return (parent, String(fields[0]), value(11) + value(12), value(13) + value(14))
    }
}
