import EaselCodecs
import EaselTestSupport
import Foundation
import Testing

/// The metric autoquality targets: 0 for the same pixels, growing with the loss, defined for
/// images of any size. (Its agreement with scikit-image's SSIM is checked on real answers in
/// AutoQualityTests.)
@Suite struct PerceptualDistanceTests {
    static func photo(_ width: Int, _ height: Int) -> Bitmap {
        painted(width: width, height: height) { x, y in
            [UInt8((x * 7 + y * 3) % 256), UInt8((x * x + y) % 256), UInt8((x ^ y) % 256), 255]
        }
    }

    @Test func theSamePixelsAreAtNoDistanceAndLossAddsDistance() throws {
        let image = Self.photo(180, 120)
        #expect(PerceptualDistance.distance(image, image) < 1e-6)
        var last = 0.0
        for quality in [95, 80, 50, 20] {
            let decoded = try ImageDecoder.decode(try ImageEncoder.encode(image, as: .jpeg(quality: quality)))
            let distance = PerceptualDistance.distance(image, decoded)
            #expect(distance > last, "quality \(quality): \(distance) after \(last)")
            last = distance
        }
    }

    @Test func anySizeIsMeasuredAndTransparencyIsSeenOnWhite() {
        // Under the window: the whole image at once.
        let tiny = Self.photo(6, 5)
        #expect(PerceptualDistance.distance(tiny, tiny) < 1e-6)
        #expect(PerceptualDistance.distance(tiny, Self.photo(6, 5).converted(to: .gray8)) > 0)
        // A clear pixel looks white: the same as an opaque white one.
        let clear = painted(width: 20, height: 20) { _, _ in [0, 0, 0, 0] }
        let white = painted(width: 20, height: 20) { _, _ in [255, 255, 255, 255] }
        #expect(PerceptualDistance.distance(clear, white) < 1e-6)
    }
}
