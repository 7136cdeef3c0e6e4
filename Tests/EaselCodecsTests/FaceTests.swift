import EaselCodecs
import EaselTestSupport
import Foundation
import Testing

/// Faces with OpenCV's Haar cascades: the face crop keeps a face wherever it is, where the
/// attention crop goes to a louder distractor; thumbor's red-eye correction.
@Suite struct FaceTests {
    static func canvas(face: (Int, Int), loud: (Int, Int)) throws -> Bitmap { try faceCanvas(face: face, loud: loud) }

    static func inside(_ box: (x: Int, y: Int, width: Int, height: Int), _ region: (x: Int, y: Int, width: Int, height: Int)) -> Bool {
        box.x >= region.x && box.y >= region.y && box.x + box.width <= region.x + region.width && box.y + box.height <= region.y + region.height
    }

    @Test(arguments: [((60, 60), (650, 380)), ((760, 80), (80, 400)), ((430, 500), (60, 40)), ((820, 520), (380, 120))])
    func aFaceStaysInsideTheFaceCropWhileAttentionGoesToTheDistractor(_ face: (Int, Int), _ loud: (Int, Int)) throws {
        try #require(FaceDetector.isAvailable, "OpenCV's cascades (opencv-data) are installed by make deps")
        let canvas = try Self.canvas(face: face, loud: loud)
        let found = try FaceDetector.faces(in: canvas)
        let expected = (x: face.0 + 26, y: face.1 + 30, width: 95, height: 95)
        let first = try #require(found.first, "the face is found at \(face)")
        #expect(abs(first.x - expected.x) < 20 && abs(first.y - expected.y) < 20 && abs(first.width - 95) < 30, "\(first)")
        let faceCrop = try SmartCrop.region(in: canvas, width: 300, height: 300, strategy: .face)
        #expect(Self.inside(expected, faceCrop), "the face \(expected) in the face crop \(faceCrop)")
        let attention = try SmartCrop.region(in: canvas, width: 300, height: 300, strategy: .attention)
        #expect(!Self.inside(expected, attention), "attention \(attention) goes elsewhere")
        #expect(Self.inside((loud.0 + 100, loud.1 + 100, 60, 60), attention), "to the distractor: \(attention)")
    }

    @Test func withoutAFaceTheFaceCropIsTheAttentionCrop() throws {
        let plain = painted(width: 400, height: 300) { x, y in x > 300 && y < 60 ? [255, 0, 0, 255] : [120, 120, 120, 255] }
        let face = try SmartCrop.region(in: plain, width: 100, height: 100, strategy: .face)
        let attention = try SmartCrop.region(in: plain, width: 100, height: 100, strategy: .attention)
        #expect(face == attention)
    }

    @Test func redEyesInAFaceAreCorrectedAndNothingElse() throws {
        try #require(FaceDetector.isAvailable, "OpenCV's cascades (opencv-data) are installed by make deps")
        var photo = try ImageDecoder.decode(try Data(contentsOf: sampleURL("astronaut.jpg")))
        let face = try #require(try FaceDetector.faces(in: photo).first)
        let eyes = try FaceDetector.eyes(in: photo, face: face)
        try #require(eyes.count >= 1, "an eye is found in \(face)")
        // Red pupils at the eyes' centres, and a red patch on the suit (no eye there).
        let pupils = eyes.map { ($0.x + $0.width / 2, $0.y + $0.height / 2) }
        let rowBytes = photo.rowBytes
        photo.withUnsafeMutableBytes { bytes in
            for (cx, cy) in pupils + [(100, 400)] {
                for y in (cy - 2)...(cy + 2) { for x in (cx - 2)...(cx + 2) {
                    let o = y * rowBytes + x * 4
                    (bytes[o], bytes[o + 1], bytes[o + 2]) = (220, 30, 30)
                } }
            }
        }
        let corrected = try RedEye().process(photo)
        for (cx, cy) in pupils {
            let p = corrected.pixel(x: cx, y: cy)
            #expect(p[0] <= 40 && p[1] == 30 && p[2] == 30, "the pupil at \(cx),\(cy): \(p)")
        }
        #expect(corrected.pixel(x: 100, y: 400) == [220, 30, 30, 255], "red outside the eyes stays")
    }
}
