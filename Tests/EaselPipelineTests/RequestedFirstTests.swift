import EaselSupport
import EaselCodecs
@testable import EaselPipeline
import EaselStorage
import EaselTables
import EaselTestSupport
import Foundation
import Testing

/// The requested variant first: a cold request decodes at the scale its own format needs and
/// answers; the family's other formats follow from that decode, after the answer, and only
/// where the decode covers them. A cold request reads each tier's index once.
@Suite(.timeLimit(.minutes(2))) struct RequestedFirstTests {
    /// The server's default family: thumb, small and square.
    static let family = [
        ImageFormat(name: "thumb", family: "web", width: 128, height: 128, fit: .fit, maximumCount: 20),
        ImageFormat(name: "small", family: "web", width: 256, height: 256, fit: .fit, maximumCount: 20),
        ImageFormat(name: "square", family: "web", width: 64, height: 64, fit: .fill, maximumCount: 20),
    ]

    /// A pipeline over `files` (a folder of its own) and a fresh cache directory, closed after `body`.
    func withFamilyPipeline(_ files: [String: Data], familyInBackground: Bool = true,
                            _ body: (ImagePipeline, TemporaryDirectory) async throws -> Void) async throws {
        let root = try TemporaryDirectory()
        for (name, data) in files { try data.write(to: root.child(name)) }
        let cache = try TemporaryDirectory()
        let pipeline = try ImagePipeline(configuration: configured(.init(
            formats: Self.family, cacheDirectory: cache.url, fetchers: [FileFetcher(root: root.url)], downloadRate: nil)) {
            $0.familyInBackground = familyInBackground
        })
        do {
            try await body(pipeline, root)
        } catch {
            await pipeline.close()
            throw error
        }
        await pipeline.close()
    }

    func has(_ pipeline: ImagePipeline, _ format: String, _ url: URL) throws -> Bool {
        let ids = ImagePipeline.entityIDs(ImageRequest(url: url, format: format), sourceKey: url.absoluteString)
        return try #require(pipeline.table(forFormat: format)).contains(ids.0, sourceID: ids.1)
    }

    @Test func aColdThumbAnswersBeforeItsFamilyWhichFollowsFromTheSameDecode() async throws {
        // A BMP decodes at full size, which covers every format (a PNG now shrinks on load too).
        let cupBMP = try ImageEncoder.encode(try ImageDecoder.decode(cupPNG), as: .bmp)
        try await withFamilyPipeline(["cup.bmp": cupBMP]) { pipeline, root in
            let gate = Gate()
            pipeline.familyHook.withLock { $0 = { try? await gate.wait() } }
            let url = root.child("cup.bmp")
            let thumb = try await pipeline.image(for: ImageRequest(url: url, format: "thumb"))
            #expect(thumb.tier == .file && thumb.image.width == 128)
            // Answered while the family job is held: small and square do not exist yet.
            #expect(try has(pipeline, "thumb", url))
            #expect(try !has(pipeline, "small", url) && !has(pipeline, "square", url))
            #expect(pipeline.counters.decodes == 1 && pipeline.counters.familyImages == 0)

            gate.open()
            await pipeline.waitForBackgroundWork()
            // A BMP decodes at full size, which covers every format: both made from that decode.
            #expect(try has(pipeline, "small", url) && has(pipeline, "square", url))
            #expect(pipeline.counters.decodes == 1, "no second decode")
            #expect(pipeline.counters.familyImages == 2)
            let small = try await pipeline.image(for: ImageRequest(url: url, format: "small"))
            #expect(small.tier == .table && small.image.width == 256)
            let square = try await pipeline.image(for: ImageRequest(url: url, format: "square"))
            #expect(square.tier == .table && square.image.width == 64 && square.image.height == 64)
            #expect(pipeline.counters.decodes == 1 && pipeline.counters.fetches == 1)
        }
    }

    /// A 1411² JPEG: thumb (128) decodes at 1/8 (177²), which covers square (64) but not small
    /// (256 needs 1/4): square is made from thumb's decode, small by one more decode at its own
    /// scale, in the background, after the answer (the family promise: every format exists
    /// after a cold request). Asking for them then decodes nothing.
    @Test func everyFormatOfTheFamilyFollowsWithOneMoreDecodePerScale() async throws {
        let fundus = try Data(contentsOf: sampleURL("retina-fundus.jpg"))
        try await withFamilyPipeline(["fundus.jpg": fundus]) { pipeline, root in
            let url = root.child("fundus.jpg")
            let thumb = try await pipeline.image(for: ImageRequest(url: url, format: "thumb"))
            #expect(thumb.image.width == 128 && thumb.sourceInfo?.width == 1411)
            await pipeline.waitForBackgroundWork()
            #expect(try has(pipeline, "square", url) && has(pipeline, "small", url))
            #expect(pipeline.counters.familyImages == 1, "square, from thumb's decode")
            #expect(pipeline.counters.decodes == 2, "small's own decode, once")
            let small = try await pipeline.image(for: ImageRequest(url: url, format: "small"))
            #expect(small.tier == .table && small.image.width == 256)
            let square = try await pipeline.image(for: ImageRequest(url: url, format: "square"))
            #expect(square.tier == .table)
            #expect(pipeline.counters.decodes == 2, "asking for them decodes nothing")
        }
    }

    /// A foreground request for the family format being made in the background joins that
    /// work: whichever starts first, small is decoded once.
    @Test func aRequestForTheFormatMadeInTheBackgroundJoinsIt() async throws {
        let fundus = try Data(contentsOf: sampleURL("retina-fundus.jpg"))
        try await withFamilyPipeline(["fundus.jpg": fundus]) { pipeline, root in
            let url = root.child("fundus.jpg")
            _ = try await pipeline.image(for: ImageRequest(url: url, format: "thumb"))
            // At once, without waiting for the background work.
            let small = try await pipeline.image(for: ImageRequest(url: url, format: "small"))
            #expect(small.image.width == 256)
            await pipeline.waitForBackgroundWork()
            #expect(pipeline.counters.decodes == 2, "thumb's and small's: \(pipeline.counters.decodes)")
        }
    }

    /// A family format made from another's decode has the pixels its own request would have
    /// made (same shrink-on-load scale): its bytes and ETag never depend on which came first.
    @Test func aFamilyFormatIsTheSameWhicheverRequestCameFirst() async throws {
        let fundus = try Data(contentsOf: sampleURL("retina-fundus.jpg"))
        func pixels(_ image: Bitmap) -> [UInt8] { image.withUnsafeBytes { Array($0) } }
        var viaFamily: [UInt8] = []
        try await withFamilyPipeline(["fundus.jpg": fundus]) { pipeline, root in
            _ = try await pipeline.image(for: ImageRequest(url: root.child("fundus.jpg"), format: "thumb"))
            await pipeline.waitForBackgroundWork()
            let square = try await pipeline.image(for: ImageRequest(url: root.child("fundus.jpg"), format: "square"))
            #expect(square.tier == .table)
            viaFamily = pixels(square.image)
        }
        try await withFamilyPipeline(["fundus.jpg": fundus]) { pipeline, root in
            let square = try await pipeline.image(for: ImageRequest(url: root.child("fundus.jpg"), format: "square"))
            #expect(square.tier == .file)
            #expect(pixels(square.image) == viaFamily, "the same pixels from its own decode")
        }
    }

    @Test func withTheFamilyOffOnlyTheRequestedFormatIsMade() async throws {
        try await withFamilyPipeline(["cup.png": cupPNG], familyInBackground: false) { pipeline, root in
            let url = root.child("cup.png")
            _ = try await pipeline.image(for: ImageRequest(url: url, format: "thumb"))
            await pipeline.waitForBackgroundWork()
            #expect(try has(pipeline, "thumb", url) && !has(pipeline, "small", url) && !has(pipeline, "square", url))
            #expect(pipeline.counters.familyImages == 0)
        }
    }

    /// A cold encoded request looks in the disk index once for its encoded variant and, when its
    /// fetcher's originals are stored (HTTP), once for the original (an animation's frames come
    /// from the original its decode read); local files, whose originals are never stored, cost
    /// no original lookup. A warm one looks up nothing.
    @Test(arguments: [false, true]) func aColdRequestLooksUpEachTierOnce(overHTTP: Bool) async throws {
        let gif = try GIFCodec.encodeAnimation(width: 120, height: 80, frames: (0..<3).map { i in (0..<9600).map { $0 % 120 / 40 == i ? 1 : 0 } },
                                               palette: [255, 0, 0, 0, 0, 255], delays: [5, 5, 5])
        @Sendable func check(_ pipeline: ImagePipeline, _ url: (String) -> URL) async throws {
            let disk = try #require(pipeline.disk)
            let original = overHTTP ? 1 : 0
            // AVIF with WebP for animations: the answer depends on whether the source is animated.
            let encodings = [ImageEncoding(.avif, quality: 60, animations: .init(asWebP: 80)), ImageEncoding(.webp, quality: 80)]
            for (name, type) in [("cup.png", "image/avif"), ("anim.gif", "image/webp")] {
                for encoding in encodings {
                    var request = ImageRequest(url: url(name), format: "thumb")
                    request.encoding = encoding
                    await pipeline.waitForBackgroundWork()
                    // The family's work after the answer is held until the answer's own
                    // lookups are counted (a follow-up decode for small reads the original too).
                    let gate = Gate()
                    pipeline.familyHook.withLock { $0 = { try? await gate.wait() } }
                    let before = disk.lookupCount
                    let cold = try await pipeline.encodedImage(for: request)
                    let lookups = disk.lookupCount - before
                    gate.open()
                    if encoding == encodings[0] {
                        #expect(cold.encoded.contentType == type, "\(name)")
                        #expect(lookups == 1 + original, "\(name): the encoded variant and the original, once each (\(lookups))")
                    } else {
                        // The second encoding: its own encoded variant, then the bitmap from
                        // memory (a still) or the animation known in memory (the original, once).
                        // (The first's family follow-up for small, at another decode scale,
                        // looks up the original too: each count starts once it is done.)
                        #expect(lookups == (name == "cup.png" ? 1 : 1 + original), "\(name), \(encoding) (\(lookups))")
                    }
                    let warm = disk.lookupCount
                    #expect(try await pipeline.encodedImage(for: request).tier == .encodedMemory)
                    #expect(disk.lookupCount == warm, "a warm answer reads no disk index")
                }
            }
            // The still: one decode for thumb, and one more in the background for small (a PNG
            // shrinks on load: small's scale is another). The animation: its frames once per
            // animated answer (the decode that finds it animated reads the frames; no first
            // frame before them).
            #expect(pipeline.counters.decodes == 4)
        }
        if overHTTP {
            let origin = Origin()
            origin.serve("/cup.png", .file(cupPNG))
            origin.serve("/anim.gif", .file(gif))
            try await origin.run { base in
                let cache = try TemporaryDirectory()
                let pipeline = try ImagePipeline(configuration: .init(formats: Self.family, cacheDirectory: cache.url, downloadRate: nil))
                do { try await check(pipeline) { base.appendingPathComponent($0) } } catch {
                    await pipeline.close()
                    throw error
                }
                await pipeline.close()
            }
        } else {
            try await withFamilyPipeline(["cup.png": cupPNG, "anim.gif": gif]) { pipeline, root in
                try await check(pipeline) { root.child($0) }
            }
        }
    }

    /// Every tier's key carries the format with every parameter that decides its pixels: a format
    /// changed between two runs on one cache directory never gets the old one's disk variant.
    @Test func aChangedFormatNeverServesTheOldOnesVariant() async throws {
        let root = try TemporaryDirectory()
        try cupPNG.write(to: root.child("cup.png"))
        let cache = try TemporaryDirectory()
        func pipeline(width: Int) throws -> ImagePipeline {
            try ImagePipeline(configuration: .init(
                formats: [ImageFormat(name: "large", width: width, height: width, maximumCount: 10, storage: .diskCache)],
                cacheDirectory: cache.url, fetchers: [FileFetcher(root: root.url)], downloadRate: nil))
        }
        let first = try pipeline(width: 200)
        #expect(try await first.image(for: ImageRequest(url: root.child("cup.png"), format: "large")).image.width == 200)
        await first.close()
        let again = try pipeline(width: 200)
        #expect(try await again.image(for: ImageRequest(url: root.child("cup.png"), format: "large")).tier == .diskVariant)
        await again.close()
        let changed = try pipeline(width: 100)
        let answer = try await changed.image(for: ImageRequest(url: root.child("cup.png"), format: "large"))
        #expect(answer.tier == .file && answer.image.width == 100, "made anew, not the 200-pixel variant")
        await changed.close()
    }
}
