import EaselCodecs
import EaselTestSupport
import Foundation
import Testing

/// Faces at any scale (issue 41): faces of 3% to 30% of the shorter side, on wide, tall and
/// photo-shaped canvases up to 8000 px, in colour and in gray, are found on the decode every
/// crop size gets (shrink-on-load planned by a face-gravity fill), whatever the crop asked for.
@Suite struct FaceScaleTests {
    /// The fractions of the shorter side the faces are.
    static let fractions = [0.03, 0.05, 0.1, 0.2, 0.3]

    struct Canvas: Sendable, CustomStringConvertible {
        var width: Int
        var height: Int
        var gray: Bool
        var description: String { "\(width)×\(height)\(gray ? " gray" : "")" }
    }

    /// The astronaut's head (Samples/astronaut.jpg, 150×155, the face 95 px at 26, 30 in it),
    /// once per fraction, on a sky-and-grass canvas with fine noise; the faces' boxes.
    static func canvas(_ shape: Canvas) throws -> (Bitmap, [FaceDetector.Box]) {
        let photo = try ImageDecoder.decode(try Data(contentsOf: sampleURL("astronaut.jpg")))
        let head = try RegionCrop(.edges(left: 150, top: 35, right: 300, bottom: 190)).process(photo)
        var canvas = Bitmap(width: shape.width, height: shape.height, pixelFormat: .rgba8)
        let rowBytes = canvas.rowBytes
        var seed: UInt32 = 2024
        canvas.withUnsafeMutableBytes { bytes in
            for y in 0..<shape.height {
                let sky = y < shape.height * 2 / 3
                for x in 0..<shape.width {
                    seed = seed &* 1_103_515_245 &+ 12345
                    let n = Int(seed >> 24) % 40
                    let o = y * rowBytes + x * 4
                    let band = (x / 97 + y / 131) % 3 * 20
                    (bytes[o], bytes[o + 1], bytes[o + 2], bytes[o + 3]) = sky
                        ? (UInt8(60 + n + band), UInt8(110 + n), UInt8(190 + n / 2), 255) : (UInt8(50 + n), UInt8(120 + n + band), UInt8(40 + n), 255)
                }
            }
        }
        let shorter = min(shape.width, shape.height), wide = shape.width >= shape.height
        var boxes: [FaceDetector.Box] = []
        var along = shorter / 20
        for (index, fraction) in fractions.enumerated() {
            let face = Int(Double(shorter) * fraction), scale = Double(face) / 95
            let (w, h) = (Int(150 * scale), Int(155 * scale))
            let resized = try Resize(width: w, height: h, mode: .exact, upscale: true).process(head)
            let across = (shorter - h) * (index % 3 + 1) / 4
            let (left, top) = wide ? (along, across) : (across, along)
            along += max(w, h) + shorter / 20
            let headRow = resized.rowBytes
            resized.withUnsafeBytes { source in
                canvas.withUnsafeMutableBytes { bytes in
                    for y in 0..<h {
                        let from = y * headRow, to = (top + y) * rowBytes + left * 4
                        for i in 0..<(w * 4) { bytes[to + i] = source[from + i] }
                    }
                }
            }
            boxes.append(FaceDetector.Box(x: left + Int(26 * scale), y: top + Int(30 * scale), width: face, height: face))
        }
        return (shape.gray ? canvas.converted(to: .gray8).converted(to: .rgba8) : canvas, boxes)
    }

    @Test(arguments: [Canvas(width: 8000, height: 2000, gray: false), Canvas(width: 2000, height: 8000, gray: false),
                      Canvas(width: 3000, height: 2000, gray: false), Canvas(width: 3000, height: 2000, gray: true)])
    func facesFromThreeToThirtyPercentAreFoundInEveryCropSize(_ shape: Canvas) throws {
        try #require(FaceDetector.isAvailable, "OpenCV's cascades (opencv-data) are installed by make deps-test")
        let (canvas, expected) = try Self.canvas(shape)
        let jpeg = try ImageEncoder.encode(canvas, as: .jpeg(quality: 92))
        let info = try ImageDecoder.info(of: jpeg)
        var seen: [String: [FaceDetector.Box]] = [:]
        for side in [64, 300, 1200] {
            let resize = Resize(width: side, height: side, mode: .fill, gravity: .smart(.face))
            let decoded = try ImageDecoder.decode(jpeg, covering: resize.minimumSourceSize(of: info))
            let key = "\(decoded.width)×\(decoded.height)"
            let found: [FaceDetector.Box]
            if let known = seen[key] { found = known } else {
                let scale = Double(shape.width) / Double(decoded.width)
                found = try FaceDetector.faces(in: decoded).map {
                    FaceDetector.Box(x: Int(Double($0.x) * scale), y: Int(Double($0.y) * scale), width: Int(Double($0.width) * scale),
                                     height: Int(Double($0.height) * scale))
                }
                seen[key] = found
            }
            for (face, fraction) in zip(expected, Self.fractions) {
                let match = found.first { box in
                    let cx = box.x + box.width / 2, cy = box.y + box.height / 2
                    return (face.x..<face.x + face.width).contains(cx) && (face.y..<face.y + face.height).contains(cy)
                        && box.width * 2 > face.width && box.width < face.width * 2
                }
                #expect(match != nil, "\(shape), crop \(side): the face of \(Int(fraction * 100))% at \(face) is found on the \(key) decode: \(found)")
            }
        }
    }

    /// A face gravity that places a crop before the resize (a native `c=…:face`, imgproxy's
    /// `c:W:H:obj:face`) gets the decode faces are found on too, not one sized by the output.
    @Test func aCropPlacedByFacesGetsTheDecodeFacesAreFoundOn() throws {
        let info = ImageInfo(fileType: .jpeg, width: 6000, height: 4000, hasAlpha: false, isGrayscale: false, isProgressive: false)
        let need = FaceDetector.decodeNeed(sourceWidth: 6000, sourceHeight: 4000)
        #expect(need.height >= 900 && need.height < 1000, "\(need)")
        let chain: [any ImageProcessor] = [RegionCrop(.size(width: 3000, height: 3000, gravity: .smart(.face))), Resize(width: 64, height: 64)]
        let covering = try #require(ReducedDecode.covering(chain, info: info))
        #expect(covering.width >= need.width && covering.height >= need.height, "\(covering)")
        let centred: [any ImageProcessor] = [RegionCrop(.size(width: 3000, height: 3000, gravity: .center)), Resize(width: 64, height: 64)]
        let small = try #require(ReducedDecode.covering(centred, info: info))
        #expect(small.height < need.height, "without faces the decode stays small: \(small)")
        var imgproxy = ImgproxyGeometry()
        imgproxy.width = 64
        imgproxy.height = 64
        imgproxy.crop = (3000, 3000, .smart(.face))
        let planned = imgproxy.minimumSourceSize(sourceWidth: 6000, sourceHeight: 4000)
        #expect(planned.width >= need.width && planned.height >= need.height, "\(planned)")
    }
}
