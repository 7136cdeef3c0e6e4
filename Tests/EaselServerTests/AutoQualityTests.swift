import EaselCodecs
import EaselPipeline
@testable import EaselServer
import EaselSupport
import EaselTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// Autoquality and best format, asked of a server on the sample photos: every answer within its
/// target as scikit-image's SSIM measures it (the metric recomputed independently), best format
/// never larger than any single format at the same target, and the URL forms that ask for them.
@Suite(.timeLimit(.minutes(5))) struct AutoQualityTests {
    static let samples = ["astronaut.jpg", "brick-wall-gray.jpg", "cameraman-gray.jpg", "chelsea-cat.jpg", "clock-motion-blur-gray.jpg",
                          "coffee-cup-cutout.png", "coffee-cup.jpg", "hubble-deep-field.jpg", "retina-fundus.jpg",
                          "rocket-launchpad-portrait.jpg", "rocket-launchpad.jpg"]

    /// A server whose origin holds the sample photos.
    static func server(_ adjust: @escaping (inout ServerConfiguration) -> Void = { _ in }) throws -> TestServer {
        let server = try TestServer {
            $0.allowUnsignedAdHoc = true
            adjust(&$0)
        }
        for name in samples { try Data(contentsOf: sampleURL(name)).write(to: server.origin.child(name)) }
        return server
    }

    /// scikit-image's reading of the metric (`PerceptualDistance`'s documentation, step by step):
    /// for each pair of PNG files, the multi-scale SSIM, one a line.
    static let reference = """
        import sys, numpy as np
        from PIL import Image
        from skimage.color import rgb2lab
        from skimage.metrics import structural_similarity
        def lab(path):
            a = np.asarray(Image.open(path).convert("RGBA")).astype(np.float64)
            alpha = a[..., 3:4] / 255.0
            return rgb2lab((a[..., :3] * alpha + 255 * (1 - alpha)) / 255.0)
        def half(p):
            h, w = p.shape[0] // 2 * 2, p.shape[1] // 2 * 2
            p = p[:h, :w]
            return (p[0::2, 0::2] + p[1::2, 0::2] + p[0::2, 1::2] + p[1::2, 1::2]) / 4
        scales, planes, ranges = [0.028, 0.197, 0.322, 0.298, 0.155], [0.8, 0.1, 0.1], [100, 255, 255]
        with open(sys.argv[1], "w") as out:
            for i in range(2, len(sys.argv), 2):
                x, y = lab(sys.argv[i]), lab(sys.argv[i + 1])
                total = weights = 0.0
                for s in range(5):
                    if s > 0 and min(x.shape[:2]) < 11:
                        break
                    value = sum(planes[c] * structural_similarity(x[..., c], y[..., c], data_range=ranges[c], gaussian_weights=True,
                                                                  sigma=1.5, use_sample_covariance=False) for c in range(3))
                    total += scales[s] * value
                    weights += scales[s]
                    x = np.stack([half(x[..., c]) for c in range(3)], -1)
                    y = np.stack([half(y[..., c]) for c in range(3)], -1)
                out.write("%.8f\\n" % (total / weights))
        """

    static func python(file: String = #filePath) -> String {
        if let python = ProcessInfo.processInfo.environment["EASEL_COMPAT_PYTHON"], !python.isEmpty { return python }
        return URL(fileURLWithPath: file).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".venv-compat/bin/python3").path
    }

    /// scikit-image's multi-scale SSIM of each pair, from one run of Python.
    static func referenceSSIM(_ pairs: [(Bitmap, Bitmap)]) throws -> [Double] {
        let python = python()
        try #require(FileManager.default.isExecutableFile(atPath: python), "no Python with scikit-image at \(python): run `make deps`")
        let directory = try TemporaryDirectory()
        var arguments = ["-c", reference, directory.child("out.txt").path]
        for (index, pair) in pairs.enumerated() {
            for (side, bitmap) in [pair.0, pair.1].enumerated() {
                let file = directory.child("\(index)-\(side).png")
                try ImageEncoder.encode(bitmap, as: .png()).write(to: file)
                arguments.append(file.path)
            }
        }
        #expect(try runTool(python, arguments, timeout: 240), "the reference ran")
        return try String(contentsOf: directory.child("out.txt"), encoding: .utf8).split(separator: "\n").compactMap { Double($0) }
    }

    static func bitmap(_ response: TestResponse) throws -> Bitmap { try ImageDecoder.decode(Data(buffer: response.body)) }

    @Test func everyAnswerMeetsItsTargetAsScikitImageMeasuresIt() async throws {
        let target = AutoQuality.defaultTarget
        let server = try Self.server()
        let pairs = Locked([(String, Bitmap, Bitmap)]())
        try await server.test { (client: any TestClientProtocol) async throws in
            for name in Self.samples {
                // The same processing, lossless: what the answers are measured against.
                let lossless = try Self.bitmap(try await get(client, "/images/w=160,h=160,f=png/\(name)"))
                for (format, accept) in [("jpeg", "image/jpeg"), ("webp", "image/webp"), ("avif", "image/avif")] {
                    let answer = try await get(client, "/images/w=160,h=160,f=\(format),q=auto/\(name)", headers: [.accept: accept])
                    #expect(answer.status == .ok && answer.headers[.contentType] == "image/\(format)", "\(name) \(format)")
                    let decoded = try Self.bitmap(answer)
                    let ours = PerceptualDistance.distance(lossless, decoded)
                    #expect(ours <= target, "\(name) \(format): \(ours)")
                    pairs.withLock { $0.append(("\(name) \(format)", lossless, decoded)) }
                }
            }
        }
        let measured = pairs.withLock { $0 }
        let references = try Self.referenceSSIM(measured.map { ($0.1, $0.2) })
        try #require(references.count == measured.count)
        for ((label, lossless, decoded), theirs) in zip(measured, references) {
            let ours = PerceptualDistance.similarity(PerceptualDistance.reference(lossless), decoded)
            #expect((ours - theirs).magnitude <= 0.01, "\(label): ours \(ours), scikit-image's \(theirs)")
            #expect(1 / theirs - 1 <= target * 1.01, "\(label): scikit-image's distance \(1 / theirs - 1) over the target")
        }
    }

    @Test func bestFormatIsNeverLargerThanAnySingleFormatAtTheTarget() async throws {
        // One fresh server per way of asking (a search depends on nothing but the bitmap, so any
        // server would do).
        func sizes(_ spec: String, accept: String) async throws -> [Int: (Int, String?)] {
            let found = Locked([Int: (Int, String?)]())
            try await Self.server().test { (client: any TestClientProtocol) async throws in
                for (index, name) in Self.samples.enumerated() {
                    let answer = try await get(client, "/images/w=160,h=160,\(spec)/\(name)", headers: [.accept: accept])
                    #expect(answer.status == .ok, "\(spec) \(name)")
                    found.withLock { $0[index] = (answer.body.readableBytes, answer.headers[.contentType]) }
                    if spec.contains("f=auto") { #expect(answer.headers[.vary] == "Accept") }
                }
            }
            return found.withLock { $0 }
        }
        let takes = "image/avif,image/webp,*/*"
        let best = try await sizes("f=auto,q=auto", accept: takes)
        let singles = [try await sizes("f=avif,q=auto", accept: takes), try await sizes("f=webp,q=auto", accept: takes),
                       try await sizes("f=jpeg,q=auto", accept: takes)]
        for index in Self.samples.indices {
            let smallest = singles.map { $0[index]!.0 }.min()!
            #expect(best[index]!.0 <= smallest, "\(Self.samples[index]): best \(best[index]!.0), smallest single \(smallest)")
        }
        // A client that takes neither AVIF nor WebP gets JPEG (PNG for a cut-out with transparency).
        let plain = try await sizes("f=auto,q=auto", accept: "image/jpeg")
        for (index, name) in Self.samples.enumerated() {
            #expect(plain[index]!.1 == (name.hasSuffix(".png") ? "image/png" : "image/jpeg"), "\(name): \(plain[index]!.1 ?? "")")
        }
    }

    @Test func anAnswerIsTheSameBytesWhateverCameBefore() async throws {
        // Two servers: one answers other images first, one does not; the same URL is the same
        // bytes (and ETag) on both, as every variant's must be across instances.
        let path = "/images/w=160,h=160,f=webp,q=auto/chelsea-cat.jpg"
        let first = Locked<String?>(nil)
        try await Self.server().test { (client: any TestClientProtocol) async throws in
            for name in Self.samples.prefix(4) { _ = try await get(client, "/images/w=160,h=160,f=webp,q=auto/\(name)") }
            let tag = try await get(client, path).headers[.eTag]
            first.withLock { $0 = tag }
        }
        let firstTag = first.withLock { $0 }
        try await Self.server().test { (client: any TestClientProtocol) async throws in
            let tag = try await get(client, path).headers[.eTag]
            #expect(tag != nil && tag == firstTag)
        }
    }

    @Test func urlsAndFormatsAskForAutoqualityAndBestFormat() async throws {
        let server = try Self.server {
            $0.formats = [configured(.init(name: "auto", width: 120, height: 120)) { $0.output = "best"; $0.qualityTarget = 0.02 },
                          configured(.init(name: "fixed", width: 120, height: 120)) { $0.output = "jpeg"; $0.quality = 95 }]
        }
        try await server.test { (client: any TestClientProtocol) async throws in
            let name = "chelsea-cat.jpg"
            func count(_ path: String, accept: String = "image/jpeg") async throws -> Int {
                let answer = try await get(client, path, headers: [.accept: accept])
                #expect(answer.status == .ok, "\(path): \(String(buffer: answer.body))")
                return answer.body.readableBytes
            }
            // A looser target: fewer bytes; the URL's own target, imgproxy's too.
            let strict = try await count("/images/w=120,h=120,f=jpeg,q=auto:0.001/\(name)")
            let loose = try await count("/images/w=120,h=120,f=jpeg,q=auto:0.02/\(name)")
            #expect(loose < strict)
            #expect(try await count("/imgproxy/insecure/rs:fit:120:120/aq:dssim:0.02/plain/local:///\(name)@jpg") < strict)
            // Best format: imgproxy's f:best and .best, a named format's output "best".
            let avif = try await get(client, "/imgproxy/insecure/rs:fit:120:120/f:best/plain/local:///\(name)", headers: [.accept: "image/avif,image/webp"])
            #expect(avif.headers[.vary] == "Accept" && ["image/avif", "image/webp"].contains(avif.headers[.contentType] ?? ""))
            let extended = try await get(client, "/imgproxy/insecure/rs:fit:120:120/plain/local:///\(name)@best", headers: [.accept: "image/jpeg"])
            #expect(extended.headers[.contentType] == "image/jpeg")
            #expect(try await count("/images/auto/\(name)") < (try await count("/images/fixed/\(name)")), "the format's target 0.02")
            // An answer made once is served from the cache: no more encodes.
            let encodes = server.server.pipeline.counters.encodes
            _ = try await count("/images/w=120,h=120,f=jpeg,q=auto:0.02/\(name)")
            #expect(server.server.pipeline.counters.encodes == encodes)
            // What cannot be asked.
            for path in ["/images/w=120,h=120,q=auto:2/\(name)", "/images/w=120,h=120,q=auto:x/\(name)",
                         "/imgproxy/insecure/aq:size:0.02/plain/local:///\(name)", "/imgproxy/insecure/aq:dssim:0.01:90:80/plain/local:///\(name)"] {
                #expect(try await get(client, path).status == .badRequest, "\(path)")
            }
        }
    }
}
