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
