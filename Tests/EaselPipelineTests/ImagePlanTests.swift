import EaselCodecs
import EaselPipeline
import EaselTestSupport
import Foundation
import Testing

/// A Swift caller builds the plan directly (no URL style): `ImageRequest(url:plan:)`.
@Suite(.timeLimit(.minutes(1))) struct ImagePlanTests {
    @Test func aPlanBuiltInSwiftIsAnsweredByThePipeline() async throws {
        let root = try TemporaryDirectory(), cache = try TemporaryDirectory()
        try ImageEncoder.encode(photoLike(width: 640, height: 480), as: .jpeg(quality: 90)).write(to: root.child("p.jpg"))
        let pipeline = try ImagePipeline(configuration: .init(cacheDirectory: cache.url, fetchers: [FileFetcher(root: root.url)], downloadRate: nil))
        var plan = ImagePlan()
        plan.width = 300
        plan.height = 200
        plan.mode = .fill
        plan.rotation = 90
        plan.turnsFirst = true
        plan.adjustments = [try Duotone(intensity: 1, dark: .black, light: RGBColour(red: 255, green: 220, blue: 0))]
        plan.format = .png
        let answer = try await pipeline.answer(for: try ImageRequest(url: root.child("p.jpg"), plan: plan))
        #expect(answer.encoded.encoding.format == .png, "the plan's format, pinned")
        let image = try ImageDecoder.decode(answer.encoded.data)
        #expect((image.width, image.height) == (300, 200))
        #expect(image.pixel(x: 150, y: 100)[2] == 0, "duotone's light colour has no blue")

        // A plan past a limit is refused with the limit named, before any work.
        plan.dpr = 9
        #expect(throws: PlanError.invalid("dpr is above 0 and at most 8")) { try ImageRequest(url: root.child("p.jpg"), plan: plan) }
        plan.dpr = 1
        plan.width = 20_000
        #expect(throws: PlanError.self) { try ImageRequest(url: root.child("p.jpg"), plan: plan, limits: (side: 4096, pixels: 1 << 24)) }
        // Marks need their prepared images: a plan without them is refused, not drawn without them.
        plan.width = 300
        plan.watermarks = [ImagePlan.Mark()]
        #expect(throws: PlanError.self) { try ImageRequest(url: root.child("p.jpg"), plan: plan) }
        await pipeline.close()
    }
}

/// The pipeline's answer carries everything an HTTP layer needs to write it: its full `Vary`
/// and whether the fallback image answered in the source's place.
@Suite(.timeLimit(.minutes(1))) struct AnswerVaryAndFallbackTests {
    @Test func theAnswerNamesItsVaryAndItsFallback() async throws {
        let root = try TemporaryDirectory()
        try ImageEncoder.encode(photoLike(width: 64, height: 48), as: .png()).write(to: root.child("stand-in.png"))
        try Data("not an image".utf8).write(to: root.child("broken.jpg"))
        let pipeline = try ImagePipeline(configuration: .init(fetchers: [FileFetcher(root: root.url)], downloadRate: nil))
        var plan = ImagePlan()
        plan.width = 32
        var request = try ImageRequest(url: root.child("missing.jpg"), plan: plan)
        request.client = ClientPreferences(accept: "image/webp,*/*", honoursSaveData: true, hints: ["Sec-CH-DPR", "DPR"])
        // No fallback: the source's error.
        await #expect(throws: PipelineError.self) { try await pipeline.answer(for: request) }
        request.fallback = FallbackSource(url: root.child("stand-in.png"))
        let missing = try await pipeline.answer(for: request)
        #expect(missing.isFallback && missing.vary == "Accept, Sec-CH-DPR, DPR, Save-Data")
        guard case .fileNotFound = missing.fallbackFor else { Issue.record("\(String(describing: missing.fallbackFor))"); return }
        #expect(missing.fallbackSource == root.child("stand-in.png").absoluteString && missing.encoded.encoding.format == .webp)
        #expect(try ImageDecoder.info(of: missing.encoded.data).width == 32, "made as the source would have been")
        // A page of the source is not one of the fallback's: it answers from its first.
        var paged = request
        paged.page = 2
        #expect(try await pipeline.answer(for: paged).isFallback)
        // A source that cannot be decoded falls back too; a pinned format varies on nothing but the hints.
        var broken = try ImageRequest(url: root.child("broken.jpg"), plan: plan)
        broken.output?.format = .png
        broken.output?.strict = true
        broken.client = ClientPreferences(accept: "image/webp", hints: ["Width"])
        broken.fallback = FallbackSource(url: root.child("stand-in.png"))
        let decoded = try await pipeline.answer(for: broken)
        #expect(decoded.isFallback && decoded.vary == "Width" && decoded.encoded.encoding.format == .png)
        // A fallback that fails too is the source's error; a source that works is no fallback.
        broken.fallback = FallbackSource(url: root.child("also-missing.png"))
        await #expect { try await pipeline.answer(for: broken) } throws: { error in
            guard case .decoding = error as? PipelineError else { return false }
            return true
        }
        var working = try ImageRequest(url: root.child("stand-in.png"), plan: plan)
        working.fallback = FallbackSource(url: root.child("broken.jpg"))
        let answered = try await pipeline.answer(for: working)
        #expect(!answered.isFallback && answered.vary == "Accept")
        await pipeline.close()
    }
}
