import EaselPipeline
@testable import EaselServer
import EaselSupport
import EaselTestSupport
import Foundation
import Testing

/// A fuzz target over the three URL styles and the plan they make: random option strings from
/// each style's grammar, every numeric slot filled with edges (2⁶³−1, −2⁶³, 2⁶², 2⁶⁴, 1e308,
/// `inf`, `nan`, 20-digit numbers…) or random numbers of every size, parsed and planned into
/// processors. Every input must end in a plan or a typed refusal: a trap ends the test process,
/// which fails the run. Seeded, so a failure replays: `EASEL_URL_FUZZ_SEED`; `EASEL_URL_FUZZ_RUNS`
/// sets the inputs per style (default 20,000 in `make test`; `make fuzz-urls` runs 1,000,000).
@Suite("URL fuzzing", .timeLimit(.minutes(5)))
struct URLFuzzTests {
    static let edges = ["9223372036854775807", "-9223372036854775808", "4611686018427387904", "18446744073709551616", "2147483648",
                        "-2147483649", "99999999999999999999", "1e308", "-1e308", "1e-308", "inf", "-inf", "nan", "0", "-0", "-1", "0.5",
                        "1", "2", "8192", "8193", "65535", "0x10", "1_000", "", " 1", "+1", "4.9e-324", "3.4028236e38"]

    /// Options of each style with `#` where a number goes.
    static let imgproxy = ["rs:fit:#:#", "rs:fill:#:#:1", "rs:force:#:#:0", "rs:auto:#:#:1:1", "s:#:#", "w:#", "h:#", "mw:#", "mh:#", "z:#",
                           "z:#:#", "dpr:#", "pd:#", "pd:#:#", "pd:#:#:#:#", "c:#:#", "c:#:#:ce:#:#", "g:ce:#:#", "g:fp:#:#", "ex:1:ce:#:#",
                           "exar:1:ce:#:#", "bl:#", "sh:#", "pix:#", "q:#", "fq:jpeg:#", "mb:#", "rot:#", "mrd:#", "t:#", "t:#:FF00FF",
                           "aq:dssim:#:#:#", "wm:#:ce:#:#:#", "wmr:#", "wms:#:#", "msfs:#", "maf:#", "mfp:#", "vts:#", "fl:1:0", "ar:1",
                           "el:1", "bg:#:#:#", "pg:#", "ra:lanczos3", "f:png", "fiu:aGVsbG8"]
    static let thumbor = ["#x#", "-#x-#", "#x#:#x#/#x#", "fit-in/#x#", "adaptive-fit-in/#x#", "trim:top-left:#", "filters:blur(#)",
                          "filters:blur(#,#)", "filters:quality(#)", "filters:rotate(#)", "filters:brightness(#)", "filters:contrast(#)",
                          "filters:rgb(#,#,#)", "filters:round_corner(#,#,#,#)", "filters:round_corner(#|#,#,#,#)",
                          "filters:noise(#)", "filters:noise(#,#)", "filters:convolution(#;#;#,#,true)", "filters:max_bytes(#)",
                          "filters:focal(#x#:#x#)", "filters:proportion(#)", "filters:watermark(x.png,#,#,#)",
                          "filters:watermark(x.png,#p,#p,#,#,#)", "filters:max_age(#)", "filters:curve([(#,#)],[],[],[])",
                          "filters:colorize(#,#,#,FF0000)", "filters:extract_focal()", "filters:fill(red,#)", "filters:sharpen(#,#,true)",
                          "filters:saturation(#)", "filters:frame(x.png)", "filters:stretch()", "filters:upscale()"]
    static let native = ["w=#", "h=#", "w=auto:#", "dpr=#", "q=#", "q=auto:#", "blur=#", "sharpen=#", "t=#", "g=fp:#:#", "fit=fill",
                         "fit=fit", "fit=exact", "f=png", "page=#", "wm=#:se:#:#:#:#:#", "wmt=RWFzZWw:#:nw:#:#:#:#", "wmu=eC5wbmc:#:c:#:#"]

    static var runs: Int { Int(ProcessInfo.processInfo.environment["EASEL_URL_FUZZ_RUNS"] ?? "") ?? 20_000 }
    static var seed: UInt64 { UInt64(ProcessInfo.processInfo.environment["EASEL_URL_FUZZ_SEED"] ?? "") ?? 0x5EED_E45E }

    /// SplitMix64: a small seeded generator, so a failing input can be made again.
    struct Random {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
        mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }

        /// A number for a slot: an edge, or a random one of any size and sign, whole or not.
        mutating func number() -> String {
            switch below(8) {
            case 0, 1: return pick(URLFuzzTests.edges)
            case 2, 3, 4: return String(below(2000))
            case 5: return String(Double(below(1000)) / 100)
            case 6: return String(Int64(bitPattern: next()) >> Int64(below(63)))
            default: return String(Double(Int64(bitPattern: next()) >> Int64(below(63))) / Double(1 << below(20)))
            }
        }

        mutating func fill(_ template: String) -> String {
            var out = ""
            for character in template { if character == "#" { out += number() } else { out.append(character) } }
            return out
        }

        mutating func options(from grammar: [String], separator: String) -> String {
            (0..<(1 + below(3))).map { _ in fill(pick(grammar)) }.joined(separator: separator)
        }
    }

    /// A URL's plan: nil when it was refused with a typed error (the only other end allowed).
    static func plan(_ options: ImagePlan) {
        _ = try? options.processors(limit: ServerConfiguration.largestSide, maxPixels: 50_000_000)
    }

    @Test func randomOptionStringsEndInAPlanOrARefusalInEveryStyle() async throws {
        let server = try TestServer()
        var random = Random(state: Self.seed)
        let start = ContinuousClock.now
        var counts = (planned: 0, refused: 0)
        // At most 20 s (a slow build, ThreadSanitizer): a time budget as well as a count.
        var done = 0
        for _ in 0..<Self.runs where ContinuousClock.now - start < .seconds(20) {
            done += 1
            let imgproxy = "/insecure/" + random.options(from: Self.imgproxy, separator: "/") + "/plain/local:///x.jpg"
            if let url = try? ImgproxyURL.parse(Substring(imgproxy), presets: [:]) {
                Self.plan(url.options)
                counts.planned += 1
            } else {
                counts.refused += 1
            }
            let thumbor = "/unsafe/" + random.options(from: Self.thumbor, separator: "/").replacingOccurrences(of: "/filters:", with: ":")
                + "/x.jpg"
            if let url = try? ThumborURL.parse(Substring(thumbor)) {
                Self.plan(url.options)
                counts.planned += 1
            } else {
                counts.refused += 1
            }
            let native = random.options(from: Self.native, separator: ",")
            if let path = try? server.server.parse(spec: native, source: .path(["x.jpg"])), case .adHoc(let options) = path.processing {
                Self.plan(options)
                counts.planned += 1
            } else {
                counts.refused += 1
            }
        }
        let elapsed = ContinuousClock.now - start
        print("URL fuzzing: \(done * 3) inputs (seed \(Self.seed)) in \(elapsed): \(counts.planned) planned, \(counts.refused) refused")
        #expect(counts.planned > 0 && counts.refused > 0, "the grammar reaches both ends")
        await server.server.shutdown()
    }

    /// The two URLs that trapped in round 4's audit, and the numeric slots next to them, answered
    /// by `easel serve` as its own process: a 4xx, never a dead server.
    @Test func theAuditsTrappingURLsAreRefusedByALiveServer() async throws {
        let origin = try TemporaryDirectory(), cache = try TemporaryDirectory()
        try catJPEG.write(to: origin.child("x.jpg"))
        let config = origin.child("easel.json")
        try Data(#"{"allowUnsignedAdHoc": true}"#.utf8).write(to: config)
        let server = try await BlockingIOPool.shared.run {
            try ChildServer(arguments: ["--origin", origin.path, "--cache-dir", cache.path, "--config", config.path])
        }
        var paths = ["/imgproxy/insecure/pd:9223372036854775807:1/plain/local:///x.jpg@png",
                     "/imgproxy/insecure/pd:4611686018427387904/plain/local:///x.jpg",
                     "/imgproxy/insecure/rs:fit:10:10/mrd:100/pd:0:9223372036854775807:0:1/plain/local:///x.jpg",
                     "/imgproxy/info/insecure/pd:4611686018427387904/plain/local:///x.jpg",
                     "/thumbor/unsafe/filters:extract_focal()/localhost/unsafe/1x1:9223372036854775807x9223372036854775807/x.jpg",
                     "/thumbor/unsafe/filters:extract_focal()/localhost/unsafe/0x4611686018427387904:1x9223372036854775807/x.jpg"]
        for edge in ["9223372036854775807", "-9223372036854775808", "1e308", "inf", "nan", "99999999999999999999"] {
            paths += ["/images/w=\(edge),h=10/x.jpg", "/images/w=10,dpr=\(edge)/x.jpg", "/imgproxy/insecure/rs:fill:\(edge):\(edge)/plain/local:///x.jpg",
                      "/imgproxy/insecure/c:\(edge):\(edge)/g:ce:\(edge):\(edge)/plain/local:///x.jpg", "/thumbor/unsafe/\(edge)x\(edge)/x.jpg",
                      "/thumbor/unsafe/\(edge)x0:\(edge)x1/x.jpg", "/thumbor/unsafe/filters:blur(\(edge))/x.jpg",
                      "/thumbor/unsafe/filters:focal(1x1:\(edge)x\(edge))/x.jpg"]
        }
        for path in paths {
            let answer = try await server.get(path)
            #expect(answer.status < 500, "\(path): \(answer.status)")
            #expect(server.process.isRunning, "the server died on \(path)")
        }
        #expect(try await server.get("/health").status == 200)
    }
}
