import CFaces
import Foundation

/// Faces and eyes, found with OpenCV's cascades from Debian's opencv-data (another directory
/// with `EASEL_HAAR_DIR`, holding `haarcascades/`' files, `lbpcascades/` beside it). Faces are
/// looked for in a gray copy at most `analysisSide` pixels on its long side (faces from about
/// 1/20 of that side up): candidates with the fast LBP cascade
/// (`lbpcascade_frontalface_improved.xml`), each confirmed by the Haar cascade
/// (`haarcascade_frontalface_default.xml`) around it. Eyes (`haarcascade_eye.xml`) are looked
/// for in the upper half of each face at full resolution.
/// Blocking; each thread keeps its own loaded cascades.
public enum FaceDetector {
    /// A found object's box, in the pixels of the image it was found in.
    public struct Box: Sendable, Hashable {
        /// The left edge.
        public var x: Int
        /// The top edge.
        public var y: Int
        /// The width.
        public var width: Int
        /// The height.
        public var height: Int

        /// A box at `x`, `y` of `width` × `height`.
        public init(x: Int, y: Int, width: Int, height: Int) { (self.x, self.y, self.width, self.height) = (x, y, width, height) }

        /// The area in pixels.
        public var area: Int { width * height }
    }

    /// The longest side faces are looked for at.
    public static let analysisSide = 768

    /// Where the cascades are read from.
    public static let cascadeDirectory: String = {
        if let directory = ProcessInfo.processInfo.environment["EASEL_HAAR_DIR"], !directory.isEmpty { return directory }
        return "/usr/share/opencv4/haarcascades"
    }()
    /// Candidates first with the fast LBP cascade, each then confirmed by the Haar cascade in its
    /// neighbourhood (LBP alone takes hard-edged textures for faces).
    static var candidateCascade: String { cascadeDirectory + "/../lbpcascades/lbpcascade_frontalface_improved.xml" }
    static var faceCascade: String { cascadeDirectory + "/haarcascade_frontalface_default.xml" }
    static var eyeCascade: String { cascadeDirectory + "/haarcascade_eye.xml" }

    /// Whether the cascades are installed (opencv-data); without them `faces(in:)` finds none.
    public static let isAvailable: Bool = [candidateCascade, faceCascade, eyeCascade].allSatisfy { FileManager.default.isReadableFile(atPath: $0) }

    /// The faces in `bitmap`, largest first (none when the cascades are not installed), looked
    /// for on a copy at most `side` pixels long (default `analysisSide`; smaller is faster and
    /// misses smaller faces).
    /// - Throws: `CodecError.invalidParameters` when OpenCV fails.
    public static func faces(in bitmap: Bitmap, analysisSide side: Int = analysisSide) throws -> [Box] {
        guard isAvailable else { return [] }
        let scale = Double(max(bitmap.width, bitmap.height)) / Double(max(64, side))
        let gray: Bitmap
        if scale > 1 {
            let width = max(1, Int((Double(bitmap.width) / scale).rounded())), height = max(1, Int((Double(bitmap.height) / scale).rounded()))
            gray = try Resize(width: width, height: height, mode: .exact).process(bitmap).converted(to: .gray8)
        } else {
            gray = bitmap.converted(to: .gray8)
        }
        let minimum = max(20, max(gray.width, gray.height) / 20)
        var found: [Box] = []
        for candidate in try detect(gray, cascade: candidateCascade, minimumSide: minimum, step: faceStep, neighbours: 3).prefix(12) {
            // The candidate's neighbourhood (a fifth more on each side), searched by Haar for a
            // face of about its size.
            let margin = candidate.width / 5
            let area = clamp(Box(x: candidate.x - margin, y: candidate.y - margin, width: candidate.width + 2 * margin,
                                 height: candidate.height + 2 * margin), gray)
            let region = try RegionCrop(.edges(left: area.x, top: area.y, right: area.x + area.width, bottom: area.y + area.height)).process(gray)
            let confirmed = try detect(region, cascade: faceCascade, minimumSide: max(20, candidate.width * 3 / 5), step: 1.1, neighbours: 3)
            if let face = confirmed.max(by: { $0.area < $1.area }) {
                found.append(Box(x: face.x + area.x, y: face.y + area.y, width: face.width, height: face.height))
            }
        }
        let factor = max(1, scale)
        return found.map { box in
            Box(x: Int((Double(box.x) * factor).rounded()), y: Int((Double(box.y) * factor).rounded()),
                width: Int((Double(box.width) * factor).rounded()), height: Int((Double(box.height) * factor).rounded()))
        }
        .map { clamp($0, bitmap) }
        .sorted { $0.area > $1.area }
    }

    /// The eyes in the upper half of `face` (a box of `bitmap`), in `bitmap`'s pixels.
    public static func eyes(in bitmap: Bitmap, face: Box) throws -> [Box] {
        guard isAvailable else { return [] }
        let upper = clamp(Box(x: face.x, y: face.y, width: face.width, height: max(1, face.height * 11 / 20)), bitmap)
        guard upper.width >= 12, upper.height >= 12 else { return [] }
        let gray = try RegionCrop(.edges(left: upper.x, top: upper.y, right: upper.x + upper.width, bottom: upper.y + upper.height)).process(bitmap)
            .converted(to: .gray8)
        let found = try detect(gray, cascade: eyeCascade, minimumSide: max(6, face.width / 10), step: 1.1, neighbours: 4)
        return found.map { Box(x: $0.x + upper.x, y: $0.y + upper.y, width: $0.width, height: $0.height) }
    }

    static func clamp(_ box: Box, _ bitmap: Bitmap) -> Box {
        let x = min(max(0, box.x), bitmap.width - 1), y = min(max(0, box.y), bitmap.height - 1)
        return Box(x: x, y: y, width: max(1, min(box.width, bitmap.width - x)), height: max(1, min(box.height, bitmap.height - y)))
    }

    /// A point thumbor's smart detectors found: a face's centre (weighing its area) or a
    /// corner (weighing 1), in the image's pixels.
    public struct FocalPoint: Sendable, Hashable {
        /// Across, in pixels.
        public var x: Double
        /// Down, in pixels.
        public var y: Double
        /// A face's area, 1 for a corner.
        public var weight: Double
        /// The face's box width, 1 for a corner.
        public var width: Int
        /// The face's box height, 1 for a corner.
        public var height: Int
        /// A face (thumbor's "Face Detection"), else a corner.
        public var isFace: Bool
    }

    /// thumbor's face cascade (its `FACE_DETECTOR_CASCADE_FILE` default).
    static var thumborCascade: String { cascadeDirectory + "/haarcascade_frontalface_alt.xml" }
    /// The longest side thumbor's detectors look at here.
    public static let thumborSide = 4096

    /// What thumbor's smart detectors find in `bitmap` (`easel_thumbor_focus`: its face cascade,
    /// else its corner detector); none when nothing is (or the cascades are not installed).
    /// - Throws: `CodecError.invalidParameters` when OpenCV fails.
    public static func thumborPoints(of bitmap: Bitmap) throws -> [FocalPoint] {
        guard isAvailable, FileManager.default.isReadableFile(atPath: thumborCascade) else { return [] }
        // At most `thumborSide` on the long side (thumbor looks at the whole image; past that the
        // same faces and corners are found at a fraction of the cost), the points mapped back.
        let factor = Double(max(bitmap.width, bitmap.height)) / Double(thumborSide)
        if factor > 1 {
            let reduced = try Resize(width: max(1, Int((Double(bitmap.width) / factor).rounded())),
                                     height: max(1, Int((Double(bitmap.height) / factor).rounded())), mode: .exact).process(bitmap)
            return try thumborPoints(of: reduced).map { point in
                FocalPoint(x: point.x * factor, y: point.y * factor, weight: point.isFace ? point.weight * factor * factor : point.weight,
                           width: Int((Double(point.width) * factor).rounded()), height: Int((Double(point.height) * factor).rounded()),
                           isFace: point.isFace)
            }
        }
        let gray = bitmap.converted(to: .gray8)
        var points = [easel_focal_point](repeating: easel_focal_point(), count: 64)
        var message = [CChar](repeating: 0, count: Int(EASEL_FACES_MESSAGE_SIZE))
        let count = gray.withUnsafeBytes { pixels in
            easel_thumbor_focus(pixels.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(gray.width), Int32(gray.height), gray.rowBytes,
                                thumborCascade, &points, Int32(points.count), &message)
        }
        guard count >= 0 else { throw CodecError.invalidParameters("smart detection: \(cMessage(message))") }
        return points.prefix(Int(count)).map {
            FocalPoint(x: $0.x, y: $0.y, weight: $0.weight, width: Int($0.width), height: Int($0.height), isFace: $0.is_face != 0)
        }
    }

    /// The centre of mass of `points`, each coordinate a floor (thumbor divides so); nil for none.
    public static func centreOfMass(_ points: [FocalPoint]) -> (x: Double, y: Double)? {
        let weight = points.reduce(0) { $0 + $1.weight }
        guard weight > 0 else { return nil }
        return ((points.reduce(0) { $0 + $1.x * $1.weight } / weight).rounded(.down), (points.reduce(0) { $0 + $1.y * $1.weight } / weight).rounded(.down))
    }

    /// thumbor's smart focus of `bitmap`: the centre of mass of `thumborPoints(of:)`, or nil.
    public static func thumborFocus(of bitmap: Bitmap) throws -> (x: Double, y: Double)? { centreOfMass(try thumborPoints(of: bitmap)) }

    /// The scale step between the sizes faces are looked for at.
    static let faceStep = ProcessInfo.processInfo.environment["EASEL_FACE_STEP"].flatMap(Double.init) ?? 1.2

    static func detect(_ gray: Bitmap, cascade: String, minimumSide: Int, step: Double, neighbours: Int) throws -> [Box] {
        var boxes = [easel_box](repeating: easel_box(), count: 64)
        var message = [CChar](repeating: 0, count: Int(EASEL_FACES_MESSAGE_SIZE))
        let count = gray.withUnsafeBytes { pixels in
            easel_detect(pixels.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(gray.width), Int32(gray.height), gray.rowBytes,
                         cascade, Int32(minimumSide), step, Int32(neighbours), &boxes, Int32(boxes.count), &message)
        }
        guard count >= 0 else { throw CodecError.invalidParameters("face detection: \(cMessage(message))") }
        return boxes.prefix(Int(min(count, Int32(boxes.count)))).map { Box(x: Int($0.x), y: Int($0.y), width: Int($0.width), height: Int($0.height)) }
    }
}

/// thumbor's `redeye()`: in each eye found inside each face (`FaceDetector`), the pixels whose
/// red stands out — red over 1.5 times the mean of green and blue, and above 60 — take that mean
/// as their red (the pupil's own darkness kept). Nothing changes where no eye is found.
public struct RedEye: ImageProcessor, Hashable {
    /// The step; it has no parameters.
    public init() {}

    /// Always `redeye`.
    public var identifier: String { "redeye" }

    /// The bitmap with red pupils corrected.
    public func process(_ bitmap: Bitmap) throws -> Bitmap {
        guard bitmap.pixelFormat == .rgba8 else { return bitmap }
        var eyes: [FaceDetector.Box] = []
        for face in try FaceDetector.faces(in: bitmap) { eyes += try FaceDetector.eyes(in: bitmap, face: face) }
        guard !eyes.isEmpty else { return bitmap }
        var result = bitmap
        let (rowBytes, width, height) = (result.rowBytes, result.width, result.height)
        result.withUnsafeMutableBytes { bytes in
            for eye in eyes {
                for y in eye.y..<min(height, eye.y + eye.height) {
                    for x in eye.x..<min(width, eye.x + eye.width) {
                        let o = y * rowBytes + x * 4
                        let red = Int(bytes[o]), mean = (Int(bytes[o + 1]) + Int(bytes[o + 2])) / 2
                        if red > 60, red * 2 > mean * 3 { bytes[o] = UInt8(mean) }
                    }
                }
            }
        }
        return result
    }
}
