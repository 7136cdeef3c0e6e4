import CFacesLoader
import Foundation

/// Faces and eyes, found with OpenCV's cascades from Debian's opencv-data (another directory
/// with `EASEL_HAAR_DIR`, holding `haarcascades/`' files, `lbpcascades/` beside it).
///
/// Faces are looked for at a size chosen from the image, never from what is asked of it: a
/// copy whose shorter side is `analysisShortSide` pixels (a small image enlarged at most
/// twice), so that a face of 3% of the shorter side is about 30 pixels, above the 24-pixel
/// window of the small cascade with room for the neighbouring scales that confirm it. Two passes
/// find candidates, each then confirmed by the Haar cascade
/// (`haarcascade_frontalface_default.xml`) in its neighbourhood:
/// - large faces anywhere: the fast LBP cascade (`lbpcascade_frontalface_improved.xml`) on a
///   copy `coarseSide` pixels long, faces from 1/20 of that side;
/// - small faces: the 24-pixel LBP cascade (`lbpcascade_frontalface.xml`) at the full analysis
///   size, where skin-toned blocks are (`skinRegions`), or over the whole image when it has too
///   little colour to tell (a gray or sepia photo) or skin almost everywhere.
/// Eyes (`haarcascade_eye.xml`) are looked for in the upper half of each face at full resolution.
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

        /// Whether `other`'s centre lies inside this box.
        func holdsCentre(of other: Box) -> Bool {
            let x = other.x + other.width / 2, y = other.y + other.height / 2
            return (self.x..<self.x + width).contains(x) && (self.y..<self.y + height).contains(y)
        }

        /// The box in an image `fx` times as wide and `fy` times as tall.
        func scaled(_ fx: Double, _ fy: Double) -> Box {
            Box(x: Int((Double(x) * fx).rounded()), y: Int((Double(y) * fy).rounded()),
                width: Int((Double(width) * fx).rounded()), height: Int((Double(height) * fy).rounded()))
        }
    }

    /// The shorter side faces are looked for at (a face of 3% of it is 30 pixels).
    public static let analysisShortSide = 1000
    /// The most a small image is enlarged for the search.
    static let maximumEnlargement = 2.0
    /// The most pixels the analysis copy has (a long banner is searched at less than
    /// `analysisShortSide`).
    static let maximumAnalysisPixels = 8_000_000
    /// The long side of the pass for large faces.
    public static let coarseSide = 768
    /// The small cascade's window: the smallest face the fine pass finds, in analysis pixels.
    static let smallestFace = 24
    /// The most small-face candidates confirmed (and found in one region: `detect`'s buffer).
    static let maximumCandidates = 128

    /// How far the image faces are looked for on may be from `analysisShortSide` (on its shorter
    /// side) and be used as it is: a decode shrunk on load by a power of two lands in this range,
    /// and resizing it by a few percent would cost more than it changes.
    static let analysisLatitude = 0.9...1.25

    /// The size faces are looked for at in a `width × height` image: itself when its shorter side
    /// is within `analysisLatitude` of `analysisShortSide` (and it is at most
    /// `maximumAnalysisPixels`), else resized to that shorter side (enlarged at most twice).
    public static func analysisSize(width: Int, height: Int) -> (width: Int, height: Int) {
        let (w, h) = (Double(max(1, width)), Double(max(1, height)))
        let fit = (Double(maximumAnalysisPixels) / (w * h)).squareRoot()
        if analysisLatitude.contains(min(w, h) / Double(analysisShortSide)), fit >= 1 { return (max(1, width), max(1, height)) }
        let scale = min(maximumEnlargement, Double(analysisShortSide) / min(w, h), fit)
        return (max(1, Int((w * scale).rounded())), max(1, Int((h * scale).rounded())))
    }

    /// The smallest decode of a `width × height` source on which faces are found as on the whole
    /// source (shrink-on-load for a face gravity): a shorter side of `analysisShortSide` less the
    /// latitude, at most the source's own.
    public static func decodeNeed(sourceWidth: Int, sourceHeight: Int) -> (width: Int, height: Int) {
        let (w, h) = (Double(max(1, sourceWidth)), Double(max(1, sourceHeight)))
        let scale = min(Double(analysisShortSide) * analysisLatitude.lowerBound / min(w, h), (Double(maximumAnalysisPixels) / (w * h)).squareRoot())
        guard scale < 1 else { return (sourceWidth, sourceHeight) }
        return (max(1, Int((w * scale).rounded(.up))), max(1, Int((h * scale).rounded(.up))))
    }

    /// Where the cascades are read from.
    public static let cascadeDirectory: String = {
        if let directory = ProcessInfo.processInfo.environment["EASEL_HAAR_DIR"], !directory.isEmpty { return directory }
        return "/usr/share/opencv4/haarcascades"
    }()
    /// Large-face candidates with the fast LBP cascade, each then confirmed by the Haar cascade in
    /// its neighbourhood (LBP alone takes hard-edged textures for faces).
    static var candidateCascade: String { cascadeDirectory + "/../lbpcascades/lbpcascade_frontalface_improved.xml" }
    /// Small-face candidates: the LBP cascade with a 24-pixel window.
    static var smallCandidateCascade: String { cascadeDirectory + "/../lbpcascades/lbpcascade_frontalface.xml" }
    static var faceCascade: String { cascadeDirectory + "/haarcascade_frontalface_default.xml" }
    static var eyeCascade: String { cascadeDirectory + "/haarcascade_eye.xml" }

    /// Whether the cascades are installed (opencv-data); without them `faces(in:)` finds none.
    public static let isAvailable: Bool = [candidateCascade, smallCandidateCascade, faceCascade, eyeCascade].allSatisfy {
        FileManager.default.isReadableFile(atPath: $0)
    }

    /// A face to confirm: its box in the analysis copy, and whether its pass equalized the histogram.
    struct Candidate {
        var box: Box
        var equalized: Bool
    }

    /// The faces in `bitmap`, largest first (none when the cascades are not installed), from 3%
    /// of its shorter side up (`analysisSize`; of a decode smaller than that, at the size it has
    /// been enlarged to at most twice).
    /// - Throws: `CodecError.invalidParameters` when OpenCV fails.
    public static func faces(in bitmap: Bitmap) throws -> [Box] {
        guard isAvailable else { return [] }
        let size = analysisSize(width: bitmap.width, height: bitmap.height)
        let (gray, skin) = try prepared(bitmap, width: size.width, height: size.height, skin: true)
        var candidates = try largeCandidates(gray)
        candidates += try smallCandidates(gray, skin: skin)
        var found: [Box] = []
        for candidate in candidates where !found.contains(where: { $0.holdsCentre(of: candidate.box) }) {
            if let face = try confirmed(candidate, in: gray), !found.contains(where: { $0.holdsCentre(of: face) || face.holdsCentre(of: $0) }) {
                found.append(face)
            }
        }
        let fx = Double(bitmap.width) / Double(gray.width), fy = Double(bitmap.height) / Double(gray.height)
        return found.map { clamp($0.scaled(fx, fy), bitmap) }.sorted { $0.area > $1.area }
    }

    /// `bitmap` resized to `width × height` and made gray by OpenCV (fast in any build: this is
    /// the most pixel work of a search), with, for an RGBA bitmap and `skin`, its skin-toned
    /// blocks (`SkinBlocks`).
    static func prepared(_ bitmap: Bitmap, width: Int, height: Int, skin wantsSkin: Bool) throws -> (Bitmap, SkinBlocks?) {
        let source = bitmap.pixelFormat == .rgba8 || bitmap.pixelFormat == .gray8 ? bitmap : bitmap.converted(to: .rgba8)
        let channels: Int32 = source.pixelFormat == .rgba8 ? 4 : 1
        var gray = Bitmap(width: width, height: height, pixelFormat: .gray8)
        var blocks = SkinBlocks(width: width, height: height)
        var coloured: Int32 = 0
        var message = [CChar](repeating: 0, count: Int(EASEL_FACES_MESSAGE_SIZE))
        let grayRowBytes = gray.rowBytes, withSkin = wantsSkin && channels == 4
        let result = source.withUnsafeBytes { pixels in
            gray.withUnsafeMutableBytes { target in
                blocks.skin.withUnsafeMutableBufferPointer { skin in
                    easel_faces_prepare(pixels.baseAddress!.assumingMemoryBound(to: UInt8.self), channels, Int32(source.width), Int32(source.height),
                                       source.rowBytes, Int32(width), Int32(height), target.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                       grayRowBytes, Int32(skinBlock), withSkin ? skin.baseAddress : nil, &coloured, &message)
                }
            }
        }
        try checkLibrary(result, library: FaceDetector.plugin, message: cMessage(message))
        guard result == 0 else { throw CodecError.invalidParameters("face detection: \(cMessage(message))") }
        blocks.coloured = Int(coloured)
        return (gray, withSkin ? blocks : nil)
    }

    /// Candidates for faces from 1/20 of the long side of a `coarseSide` copy of `gray` up, in
    /// `gray`'s pixels.
    static func largeCandidates(_ gray: Bitmap) throws -> [Candidate] {
        let factor = Double(max(gray.width, gray.height)) / Double(coarseSide)
        let coarse = factor > 1
            ? try prepared(gray, width: max(1, Int((Double(gray.width) / factor).rounded())), height: max(1, Int((Double(gray.height) / factor).rounded())),
                           skin: false).0
            : gray
        let minimum = max(20, max(coarse.width, coarse.height) / 20)
        return try detect(coarse, cascade: candidateCascade, minimumSide: minimum, equalize: true, step: faceStep, neighbours: 3)
            .prefix(12).map { Candidate(box: clamp($0.scaled(Double(gray.width) / Double(coarse.width), Double(gray.height) / Double(coarse.height)), gray),
                                        equalized: true) }
    }

    /// The largest face side the fine pass looks for: past the smallest the large pass finds, by
    /// half again (the passes overlap).
    static func smallFaceCeiling(_ gray: Bitmap) -> Int {
        let factor = max(1, Double(max(gray.width, gray.height)) / Double(coarseSide))
        let coarseMinimum = max(20, min(coarseSide, max(gray.width, gray.height)) / 20)
        // The large cascade's window is 45 pixels: its smallest face is the larger of the two.
        return Int(Double(max(coarseMinimum, 45)) * factor * 1.5)
    }

    /// Candidates for small faces (24 pixels to `smallFaceCeiling`) where skin is, or everywhere:
    /// two neighbouring detections suffice (a face of 30 px has few scales below it), the Haar
    /// cascade confirming each.
    static func smallCandidates(_ gray: Bitmap, skin: SkinBlocks?) throws -> [Candidate] {
        let whole = Box(x: 0, y: 0, width: gray.width, height: gray.height)
        let ceiling = smallFaceCeiling(gray)
        let regions = skin.flatMap { skinRegions($0, smallestFace: smallestFace, largestFace: ceiling) } ?? [whole]
        var candidates: [Candidate] = []
        for region in regions where region.width >= smallestFace && region.height >= smallestFace {
            let part = region == whole ? gray : try RegionCrop(.edges(left: region.x, top: region.y, right: region.x + region.width,
                                                                       bottom: region.y + region.height)).process(gray)
            let boxes = try detect(part, cascade: smallCandidateCascade, minimumSide: smallestFace, maximumSide: ceiling, equalize: false,
                                   step: 1.1, neighbours: 2)
            candidates += boxes.map { Candidate(box: Box(x: $0.x + region.x, y: $0.y + region.y, width: $0.width, height: $0.height), equalized: false) }
        }
        // Each is confirmed (a few cheap Haar searches of its neighbourhood): the largest first,
        // at most `maximumCandidates` (a crowd's faces are not dropped behind texture's).
        return Array(candidates.sorted { $0.box.area > $1.box.area }.prefix(maximumCandidates))
    }

    /// The Haar cascade's face around `candidate` (its neighbourhood: a fifth more on each side),
    /// of about its size; nil when there is none.
    static func confirmed(_ candidate: Candidate, in gray: Bitmap) throws -> Box? {
        let box = candidate.box, margin = max(2, box.width / 5)
        let area = clamp(Box(x: box.x - margin, y: box.y - margin, width: box.width + 2 * margin, height: box.height + 2 * margin), gray)
        let region = try RegionCrop(.edges(left: area.x, top: area.y, right: area.x + area.width, bottom: area.y + area.height)).process(gray)
        let faces = try detect(region, cascade: faceCascade, minimumSide: max(20, box.width * 3 / 5), equalize: candidate.equalized, step: 1.1, neighbours: 3)
        return faces.max { $0.area < $1.area }.map { Box(x: $0.x + area.x, y: $0.y + area.y, width: $0.width, height: $0.height) }
    }

    /// The eyes in the upper half of `face` (a box of `bitmap`), in `bitmap`'s pixels.
    public static func eyes(in bitmap: Bitmap, face: Box) throws -> [Box] {
        guard isAvailable else { return [] }
        let upper = clamp(Box(x: face.x, y: face.y, width: face.width, height: max(1, face.height * 11 / 20)), bitmap)
        guard upper.width >= 12, upper.height >= 12 else { return [] }
        let gray = try RegionCrop(.edges(left: upper.x, top: upper.y, right: upper.x + upper.width, bottom: upper.y + upper.height)).process(bitmap)
            .converted(to: .gray8)
        let found = try detect(gray, cascade: eyeCascade, minimumSide: max(6, face.width / 10), equalize: true, step: 1.1, neighbours: 4)
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
            easel_faces_thumbor_focus(pixels.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(gray.width), Int32(gray.height), gray.rowBytes,
                                thumborCascade, &points, Int32(points.count), &message)
        }
        try checkLibrary(count, library: plugin, message: cMessage(message))
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

    /// The detector's plugin (OpenCV's, loaded on first use), as `CodecError.libraryUnavailable` names it.
    static let plugin = "the face detector (libEaselFaces.so, OpenCV)"

    /// The scale step between the sizes faces are looked for at.
    static let faceStep = ProcessInfo.processInfo.environment["EASEL_FACE_STEP"].flatMap(Double.init) ?? 1.2

    static func detect(_ gray: Bitmap, cascade: String, minimumSide: Int, maximumSide: Int = 0, equalize: Bool, step: Double,
                       neighbours: Int) throws -> [Box] {
        var boxes = [easel_box](repeating: easel_box(), count: maximumCandidates)
        var message = [CChar](repeating: 0, count: Int(EASEL_FACES_MESSAGE_SIZE))
        let count = gray.withUnsafeBytes { pixels in
            easel_faces_detect(pixels.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(gray.width), Int32(gray.height), gray.rowBytes,
                         cascade, Int32(minimumSide), Int32(maximumSide), equalize ? 1 : 0, step, Int32(neighbours), &boxes,
                         Int32(boxes.count), &message)
        }
        try checkLibrary(count, library: plugin, message: cMessage(message))
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
