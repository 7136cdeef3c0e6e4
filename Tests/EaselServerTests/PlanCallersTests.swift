import EaselCodecs
import EaselPipeline
@testable import EaselServer
import EaselSupport
import EaselTestSupport
import Foundation
import Hummingbird
import HummingbirdTesting
import Prometheus
import Testing

/// One plan, every caller: `easel thumbnail --imgproxy` and `--thumbor` make the bytes
/// `easel serve` answers for the same options (the same parser, steps, decode scale and encoder).
@Suite(.timeLimit(.minutes(2))) struct PlanCallersTests {
    /// `easel thumbnail ARGUMENTS` on `input` into a fresh directory: its status, the thumbnail's
    /// bytes (nil when none was written) and its standard error.
    static func thumbnail(_ arguments: [String], input: URL) async throws -> (status: Int32, data: Data?, error: String) {
        let output = try TemporaryDirectory()
        return try await offThePool {
            let process = Process()
            process.executableURL = builtProduct("easel")
            process.arguments = ["thumbnail", "--output-dir", output.url.path] + arguments + [input.path]
            let error = Pipe()
            process.standardOutput = FileHandle.nullDevice
            process.standardError = error
            try ChildProcesses.run(process)
            let message = error.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            let written = output.allFiles().first.flatMap { try? Data(contentsOf: output.child($0)) }
            return (process.terminationStatus, written, String(decoding: message, as: UTF8.self))
        }
    }

    @Test func theCLIMakesWhatTheServerAnswersForTheSameOptions() async throws {
        let server = try TestServer { $0.allowUnsignedAdHoc = true }
        let input = server.origin.child("cup.jpg")
        try FileManager.default.copyItem(at: sampleURL("coffee-cup.jpg"), to: input)
        let cases: [(flag: String, options: String, path: String)] = [
            ("--imgproxy", "rs:fill:300:200/g:sm/q:90", "/imgproxy/insecure/rs:fill:300:200/g:sm/q:90/plain/local:///cup.jpg@jpg"),
            ("--imgproxy", "rot:90/c:0.5:0.5/rs:fit:128:128/mc:1", "/imgproxy/insecure/rot:90/c:0.5:0.5/rs:fit:128:128/mc:1/plain/local:///cup.jpg@jpg"),
            ("--thumbor", "300x200/smart/filters:grayscale()", "/thumbor/unsafe/300x200/smart/filters:grayscale()/cup.jpg"),
        ]
        try await server.test { (client: any TestClientProtocol) async throws in
            for item in cases {
                let served = try await get(client, item.path)
                #expect(served.status == .ok, "\(item.path): \(String(buffer: served.body))")
                let made = try await Self.thumbnail([item.flag, item.options], input: input)
                #expect(made.status == 0, "\(item.options): \(made.error)")
                #expect(made.data == Data(buffer: served.body), "\(item.flag) \(item.options): the CLI's bytes differ from the server's")
            }
        }
    }

    @Test func theCLIRefusesWhatThePlanRefusesNamingIt() async throws {
        let directory = try TemporaryDirectory()
        let input = directory.child("cup.jpg")
        try FileManager.default.copyItem(at: sampleURL("coffee-cup.jpg"), to: input)
        // (imgproxy's box without `enlarge` is never larger than the source: only an enlarging
        // one can pass the limits.)
        let limit = try await Self.thumbnail(["--imgproxy", "rs:fit:99999:10:1"], input: input)
        #expect(limit.status != 0 && limit.data == nil && limit.error.contains("at most"), "\(limit.error)")
        let unknown = try await Self.thumbnail(["--imgproxy", "nonsense:1"], input: input)
        #expect(unknown.status != 0 && unknown.error.contains("nonsense"), "\(unknown.error)")
        let mark = try await Self.thumbnail(["--thumbor", "100x100/filters:watermark(m.png,0,0,50)"], input: input)
        #expect(mark.status != 0 && mark.error.contains("easel serve"), "\(mark.error)")
        let both = try await Self.thumbnail(["--imgproxy", "rs:fit:10:10", "--thumbor", "10x10"], input: input)
        #expect(both.status != 0 && both.error.contains("not both"), "\(both.error)")
        // What the server refuses, under its own limits (2048 a side by default).
        let large = try await Self.thumbnail(["--imgproxy", "rs:fit:3000:3000:1"], input: input)
        #expect(large.status != 0 && large.error.contains("2048"), "\(large.error)")
        // A thumbor segment it does not know is refused, not read as part of a path.
        let typo = try await Self.thumbnail(["--thumbor", "300x200/filter:grayscale()"], input: input)
        #expect(typo.status != 0 && typo.error.contains("not thumbor options"), "\(typo.error)")
        // A flag the style's options would override is refused rather than ignored.
        let page = try await Self.thumbnail(["--imgproxy", "rs:fit:10:10", "--page", "1"], input: input)
        #expect(page.status != 0 && page.error.contains("--page"), "\(page.error)")
    }
}

/// A URL style is a route collection any Hummingbird application can mount on its own router.
@Suite(.timeLimit(.minutes(2))) struct MountedRoutesTests {
    /// The routes over a pipeline of the application's own: its fetcher and tiers answer, the
    /// server's configuration reads the URLs, and the server leaves the pipeline open.
    @Test func routesOverAPipelineOfOurOwn() async throws {
        let origin = try TemporaryDirectory()
        try FileManager.default.copyItem(at: sampleURL("coffee-cup.jpg"), to: origin.child("cup.jpg"))
        let pipeline = try ImagePipeline(configuration: .init(fetchers: [FileFetcher(root: origin.url)], downloadRate: nil))
        var configuration = ServerConfiguration()
        configuration.origin = origin.url.path
        configuration.allowUnsignedAdHoc = true
        configuration.accessLog = false
        let images = try ImageServer(configuration: configuration, pipeline: pipeline, registry: PrometheusCollectorRegistry())
        let router = Router(context: EaselRequestContext.self)
        // (Any mount point: the routes read the path below it.)
        router.addRoutes(images.imgproxyRoutes(), atPath: "/media/imgproxy-style")
        router.addRoutes(images.thumborRoutes(), atPath: "/t")
        router.addRoutes(images.nativeRoutes(), atPath: "/pictures")
        try await Application(router: router).test(.router) { client in
            let resized = try await get(client, "/media/imgproxy-style/insecure/rs:fit:200:200/plain/local:///cup.jpg@png")
            #expect(resized.status == .ok && resized.headers[.contentType] == "image/png")
            #expect(try ImageDecoder.info(of: Data(buffer: resized.body)).width <= 200)
            #expect(pipeline.counters.decodes == 1, "our pipeline made it")
            let thumbor = try await get(client, "/t/unsafe/100x100/cup.jpg")
            #expect(thumbor.status == .ok, "\(String(buffer: thumbor.body))")
            #expect(pipeline.counters.decodes == 2)
            #expect(try await get(client, "/pictures/w=64,h=64/cup.jpg").status == .ok)
            #expect(pipeline.counters.decodes == 3)
            #expect(try await get(client, "/media/imgproxy-style/insecure/rs:fit:200:200/plain/local:///missing.jpg").status == .notFound)
        }
        await images.shutdown()
        // Still open: the application closes its own pipeline.
        let after = try await pipeline.answer(for: ImageRequest(url: origin.child("cup.jpg"), processing: .original))
        #expect(!after.encoded.data.isEmpty)
        await pipeline.close()
    }

    @Test func imgproxyRoutesMountedAtAPathOfOurOwnAnswerAsEaselServe() async throws {
        let server = try TestServer { $0.allowUnsignedAdHoc = true }
        let options = "rot:90/rs:fill:120:80/g:sm/mc:0.5/plain/local:///cat.jpg@png"
        // easel serve's own router first.
        let served = Locked(Data())
        try await Application(router: server.server.router()).test(.router) { client in
            let response = try await get(client, "/imgproxy/insecure/" + options)
            #expect(response.status == .ok)
            served.withLock { $0 = Data(buffer: response.body) }
        }
        // An application's own router: its route, and imgproxy's URLs at /img.
        let router = Router(context: EaselRequestContext.self)
        router.get("/api/version") { _, _ in "1.0\n" }
        router.addRoutes(server.server.imgproxyRoutes(), atPath: "/img")
        try await Application(router: router).test(.router) { client in
            let mounted = try await get(client, "/img/insecure/" + options)
            #expect(mounted.status == .ok && mounted.headers[.contentType] == "image/png")
            #expect(Data(buffer: mounted.body) == served.withLock { $0 }, "the same bytes as easel serve")
            #expect(try await get(client, "/api/version").status == .ok)
            #expect(try await get(client, "/imgproxy/insecure/" + options).status == .notFound, "only what was mounted")
        }
        await server.server.shutdown()
    }
}

/// One plan whichever style wrote it: the same request in three URL styles and the CLI is one
/// chain (one identity), one decode in the server; every output limit is the same typed refusal
/// from every style.
@Suite(.timeLimit(.minutes(2))) struct OnePlanEveryStyleTests {
    @Test func theSameRequestInThreeStylesIsOneDecode() async throws {
        let server = try TestServer { $0.allowUnsignedAdHoc = true }
        try await server.test { (client: any TestClientProtocol) async throws in
            // (A fit to PNG: thumbor's fill samples as thumbor does, half a pixel from the others',
            // and its JPEG drops alpha where the others composite it.)
            let paths = ["/images/w=300,h=200,fit=fit,f=png/cat.jpg",
                         "/imgproxy/insecure/rs:fit:300:200/plain/local:///cat.jpg@png",
                         "/thumbor/unsafe/fit-in/300x200/filters:format(png)/cat.jpg"]
            var bodies: [Data] = []
            for path in paths {
                let response = try await get(client, path, headers: [.accept: "image/jpeg"])
                #expect(response.status == .ok, "\(path): \(String(buffer: response.body))")
                bodies.append(Data(buffer: response.body))
            }
            #expect(server.server.pipeline.counters.decodes == 1, "one decode for the three styles")
            #expect(Set(bodies).count == 1, "the same bytes")
            // The CLI's plan for the same options is the same chain (the identity's processing part).
            let cli = try PlanParsing.imgproxy("rs:fit:300:200/f:png").plan.processors(limit: 2048, maxPixels: 16_777_216)
            #expect(cli.identifier == Resize(width: 300, height: 200, mode: .fit).identifier)
        }
    }

    /// The pipeline's one identity for what a request makes (`ImageIdentity`): equal for the
    /// same request from imgproxy's and thumbor's parsers and a plan written by hand, different
    /// when a pixel parameter, the quality or the source differs.
    @Test func theSameRequestFromEveryCallerIsOneIdentity() async throws {
        let pipeline = try ImagePipeline()
        let checked = Result { try Self.checkOneIdentity(pipeline) }
        await pipeline.close()
        try checked.get()
    }

    static func checkOneIdentity(_ pipeline: ImagePipeline) throws {
        let url = URL(fileURLWithPath: "/photos/cat.jpg")
        let client = ClientPreferences(accept: "image/jpeg")
        func identity(_ plan: ImagePlan, _ source: URL = url) throws -> ImageIdentity? {
            var request = try ImageRequest(url: source, plan: plan)
            request.client = client
            return pipeline.identity(for: request)
        }
        let imgproxy = try PlanParsing.imgproxy("rs:fit:300:200/q:80/f:webp").plan
        let thumbor = try PlanParsing.thumbor("fit-in/300x200/filters:quality(80):format(webp)").plan
        var byHand = ImagePlan()
        byHand.width = 300
        byHand.height = 200
        byHand.mode = .fit
        byHand.quality = 80
        byHand.format = .webp
        let identities = try [imgproxy, thumbor, byHand].map { try #require(try identity($0)) }
        #expect(Set(identities).count == 1, "\(identities)")
        #expect(identities[0].encoding == ImageEncoding(.webp, quality: 80) && identities[0].source == url.absoluteString)
        var sharper = byHand
        sharper.sharpen = 1
        var lower = byHand
        lower.quality = 70
        for other in [try identity(sharper), try identity(lower), try identity(byHand, URL(fileURLWithPath: "/photos/dog.jpg"))] {
            #expect(other != nil && other != identities[0])
        }
        // Every tier's key derives from it.
        #expect(identities[0].variant.memory.hasSuffix(url.absoluteString) && identities[0].variant.identity.hasPrefix(identities[0].encoding.description))
    }

    @Test func eachOutputLimitIsTheSameRefusalFromEveryStyle() async throws {
        let server = try TestServer { $0.allowUnsignedAdHoc = true }
        // (limit, native, imgproxy, thumbor) — the same request past the same limit.
        let cases: [(String, String, String, String)] = [
            // (imgproxy's box may only pass the limit when it may enlarge: without `enlarge` the
            // answer is never larger than the source, and imgproxy answers it.)
            ("2048 pixels a side", "/images/w=5000,h=100/cat.jpg", "/imgproxy/insecure/rs:fit:5000:100:1/plain/local:///cat.jpg",
             "/thumbor/unsafe/5000x100/cat.jpg"),
            ("dpr", "/images/w=100,dpr=9/cat.jpg", "/imgproxy/insecure/rs:fit:100:0/dpr:9/plain/local:///cat.jpg", ""),
            ("blur", "/images/w=100,blur=300/cat.jpg", "/imgproxy/insecure/rs:fit:100:0/bl:300/plain/local:///cat.jpg",
             "/thumbor/unsafe/100x0/filters:blur(300)/cat.jpg"),
        ]
        try await server.test { (client: any TestClientProtocol) async throws in
            for (limit, native, imgproxy, thumbor) in cases {
                for path in [native, imgproxy, thumbor] where !path.isEmpty {
                    let response = try await get(client, path)
                    #expect(response.status == .badRequest, "\(path): \(response.status)")
                    #expect(String(buffer: response.body).contains(limit.split(separator: " ").first.map(String.init) ?? limit),
                            "\(path): \(String(buffer: response.body))")
                }
            }
            #expect(server.server.pipeline.counters.decodes == 0, "refused before any work")
        }
    }
}

/// The server's memory budget: by default never smaller than one full-size decode of the
/// largest source the limits let in (the default refuses nothing that worked without it); 0 is
/// none; a byte count with a unit is read from the flag's and the variable's text.
@Suite struct MemoryBudgetSettingTests {
    @Test func theDefaultBudgetAdmitsTheLargestSourceTheLimitsLetIn() throws {
        var configuration = ServerConfiguration()
        configuration.maxSourcePixels = 400_000_000
        let budget = try #require(configuration.effectiveMemoryBudget)
        #expect(budget >= MemoryEstimate.peakBytes(pixels: 400_000_000) && budget >= 256 << 20)
        configuration.memoryBudget = 0
        #expect(configuration.effectiveMemoryBudget == nil)
        configuration.memoryBudget = 300 << 20
        #expect(configuration.effectiveMemoryBudget == 300 << 20)
        try configuration.apply(environment: ["EASEL_MEMORY_BUDGET": "2G"])
        #expect(configuration.memoryBudget == 2 << 30)
        #expect(throws: ServerConfigurationError.self) { try configuration.apply(environment: ["EASEL_MEMORY_BUDGET": "lots"]) }
        #expect(ServerConfiguration.byteCount("300M") == 300 << 20 && ServerConfiguration.byteCount("512 KiB") == 512 << 10)
        #expect(ServerConfiguration.byteCount("12") == 12 && ServerConfiguration.byteCount("-1") == nil && ServerConfiguration.byteCount("9999999999G") == nil)
    }
}
