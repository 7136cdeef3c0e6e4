import Synchronization
import EaselCodecs
import EaselSupport
import Foundation

/// Autoquality's settings: the most perceptual distance (`PerceptualDistance`, `dssim`'s
/// measure) an answer may have from the bitmap it is made of, and the qualities searched
/// (each format's own scale). The answer is the lowest quality within the target that the
/// search finds, or `maxQuality` when none is.
public struct AutoQuality: Sendable, Hashable, CustomStringConvertible {
    /// The most distance allowed.
    public var target: Double
    /// The lowest quality tried.
    public var minQuality: Int
    /// The highest quality tried (and the answer's when no quality meets the target).
    public var maxQuality: Int

    /// The default target: the median distance JPEG at quality 80 gives a 256-pixel thumbnail
    /// of the sample photos (`Benchmarks/peers/autoquality.sh` prints it).
    public static let defaultTarget = 0.0048

    /// Settings clamped to sense: a target above 0 (at most 1), qualities 1–100 with
    /// `minQuality` ≤ `maxQuality`.
    public init(target: Double = AutoQuality.defaultTarget, minQuality: Int = 30, maxQuality: Int = 95) {
        self.target = target.isFinite ? min(1, max(0.000_01, target)) : AutoQuality.defaultTarget
        self.maxQuality = min(100, max(1, maxQuality))
        self.minQuality = min(self.maxQuality, max(1, minQuality))
    }

    /// `auto0.0048-30-95`: every field, the target exactly, for cache keys.
    public var description: String { "auto\(target)-\(minQuality)-\(maxQuality)" }
}

/// Where autoquality's search starts: a quality predicted from the target alone (each format's
/// quality at the default target on the sample photos, moved by the distance's log-linear fall),
/// so that the same bitmap always gets the same bytes — on any instance, whatever it answered
/// before — and its ETag never depends on which request came first.
enum QualityStart {
    /// The quality that meets `AutoQuality.defaultTarget` for a typical photo, per format.
    static func anchor(_ format: ImageEncoding.Format) -> Double {
        switch format {
        case .avif: 58
        case .jxl: 75
        case .webp: 78
        default: 80
        }
    }

    static func quality(_ format: ImageEncoding.Format, _ settings: AutoQuality) -> Int {
        let predicted = anchor(format) + log(AutoQuality.defaultTarget / settings.target) / 0.05
        return min(settings.maxQuality, max(settings.minQuality, Int(predicted.rounded())))
    }
}

/// A count shared by the copies of one `StillEncoder` (it is a value).
final class SharedCount: Sendable {
    private let value = Atomic<Int>(0)
    /// Adds one and returns the new count.
    func next() -> Int { value.add(1, ordering: .relaxed).newValue }
}

/// A still's bytes for an encoding: one encode at its quality, or autoquality's search, or best
/// format's choice among formats; then the `maxBytes` bound. Blocking (runs on the decode pool).
///
/// The work is bounded: an autoquality search takes six encodes at most per format (plus one at
/// the highest quality when none met the target), and `maxBytes` one bisection of seven at most,
/// of the smallest answer only (so `@best` with autoquality and `max_bytes` is at most
/// `encodeBudget` encodes, where it took 31); every encode first asks whether the work was
/// cancelled (a deadline passed, the last requester left).
struct StillEncoder {
    let encoding: ImageEncoding
    let rights: RightsMetadata?
    /// Called after each encode with the count so far (tests: cancelling a search mid-way).
    var afterEncode: (@Sendable (Int) -> Void)?

    /// The most encodes one answer may take, searches and bound together: a full autoquality
    /// search (six, and one at the highest quality) in each of best format's three formats, and
    /// one bisection (seven).
    static let encodeBudget = 3 * 7 + 7

    /// The bytes, what they are (format and quality), and how many encodes they took.
    func encode(_ image: Bitmap) throws -> (data: Data, made: ImageEncoding, encodes: Int) {
        let transparent = image.hasTransparentPixels
        var formats = encoding.bestOf.isEmpty ? [encoding.format] : encoding.bestOf
        if !encoding.bestOf.isEmpty, transparent {
            // JPEG would lose the transparency: PNG takes its place.
            formats = formats.map { $0 == .jpeg ? .png : $0 }
            formats = formats.enumerated().filter { index, format in !formats[..<index].contains(format) }.map(\.element)
        }
        let reference = try encoding.autoQuality.map { _ in PerceptualDistance.reference(try PerceptualDistance.comparable(image)) }
        var made: [(data: Data, format: ImageEncoding.Format, quality: Int, input: Bitmap)] = []
        var encodes = 0
        for format in formats {
            // JPEG has no alpha: transparent pixels go on white rather than on black.
            let input = format == .jpeg && !image.isKnownOpaque ? try Flatten().process(image) : image
            let quality = encoding.bestOf.isEmpty || format != .avif ? encoding.quality : ImageEncoding.avifQuality(forJPEGQuality: encoding.quality)
            let (data, chosen, count) = if let settings = encoding.autoQuality, let reference, format.hasQuality {
                try search(input, format: format, settings: settings, reference: reference)
            } else {
                (try encode(input, format, quality), quality, 1)
            }
            encodes += count
            made.append((data, format, chosen, input))
        }
        // `maxBytes`: one bisection, of the smallest answer a quality can shrink (not one per format).
        if let limit = encoding.maxBytes, !made.contains(where: { $0.data.count <= limit }),
           let index = made.indices.filter({ made[$0].format.hasQuality }).min(by: { made[$0].data.count < made[$1].data.count }) {
            let candidate = made[index]
            let (data, chosen, count) = try bounded(candidate.input, format: candidate.format, below: candidate.quality, limit: limit,
                                                    first: candidate.data)
            encodes += count
            made[index] = (data, candidate.format, chosen, candidate.input)
        }
        // The smallest answer within the bound, else the smallest of all.
        let fitting = encoding.maxBytes.map { limit in made.filter { $0.data.count <= limit } } ?? made
        guard let best = (fitting.isEmpty ? made : fitting).min(by: { $0.data.count < $1.data.count }) else {
            throw CodecError.invalidParameters("no format to encode")
        }
        return (best.data, encoding.made(best.format, quality: best.quality), encodes)
    }

    func encode(_ image: Bitmap, _ format: ImageEncoding.Format, _ quality: Int) throws -> Data {
        if WorkCancellation.isCancelled { throw CodecError.cancelled }
        guard let options = ImageEncoding(format, quality: quality).options else { throw CodecError.invalidParameters("\(format) is not encoded from pixels") }
        let data = try ImageEncoder.encode(image, as: options, rights: rights)
        if let afterEncode { afterEncode(encodeCount.next()) }
        return data
    }

    /// Encodes so far, for `afterEncode`.
    let encodeCount = SharedCount()

    /// The lowest quality whose answer is within the target that the search finds. The
    /// distance falls about exponentially with the quality (its logarithm about 0.05 a quality
    /// point for JPEG, WebP and AVIF alike), so from `QualityStart` each next quality is
    /// where that line — through the last two measures once there are two — meets 95 % of the
    /// target, kept inside the bracket of the measures so far. It stops at a pass within 15 % of
    /// the target (nothing much left to gain), a bracket of one quality, a bound, or six encodes.
    func search(_ image: Bitmap, format: ImageEncoding.Format, settings: AutoQuality,
                reference: PerceptualDistance.Reference) throws -> (Data, Int, Int) {
        var quality = QualityStart.quality(format, settings)
        var pass: (quality: Int, distance: Double, data: Data)?
        var fail: (quality: Int, distance: Double, data: Data)?
        var measures: [(quality: Int, distance: Double)] = []
        while measures.count < 6 {
            let data = try encode(image, format, quality)
            let decoded = try PerceptualDistance.comparable(try ImageDecoder.decode(data))
            let distance = decoded.width == reference.width && decoded.height == reference.height
                ? max(1e-9, PerceptualDistance.distance(reference, decoded)) : .infinity
            measures.append((quality, distance))
            if distance <= settings.target {
                if pass == nil || quality < pass!.quality { pass = (quality, distance, data) }
                if distance >= settings.target * 0.85 || quality <= settings.minQuality { break }
            } else {
                if fail == nil || quality > fail!.quality { fail = (quality, distance, data) }
                if quality >= settings.maxQuality { break }
            }
            let low = (fail?.quality ?? settings.minQuality - 1) + 1, high = (pass?.quality ?? settings.maxQuality + 1) - 1
            guard low <= high, distance.isFinite else { break }
            var slope = -0.05
            if measures.count >= 2 {
                let (a, b) = (measures[measures.count - 1], measures[measures.count - 2])
                if a.quality != b.quality, a.distance.isFinite, b.distance.isFinite {
                    let fitted = (log(a.distance) - log(b.distance)) / Double(a.quality - b.quality)
                    if fitted < -0.005 { slope = fitted }
                }
            }
            let aim = log(settings.target * 0.95)
            let next = min(high, max(low, Int((Double(quality) + (aim - log(distance)) / slope).rounded(.up))))
            if next == quality { break }
            quality = next
        }
        if let pass { return (pass.data, pass.quality, measures.count) }
        // Nothing met the target: the highest quality's answer.
        if let fail, fail.quality == settings.maxQuality { return (fail.data, settings.maxQuality, measures.count) }
        return (try encode(image, format, settings.maxQuality), settings.maxQuality, measures.count + 1)
    }

    /// The highest quality below `quality` whose bytes fit `limit` (a binary search: at most
    /// seven more encodes), else the smallest bytes found.
    func bounded(_ image: Bitmap, format: ImageEncoding.Format, below quality: Int, limit: Int,
                 first: Data) throws -> (Data, Int, Int) {
        var (low, high) = (1, quality - 1)
        var best: (Data, Int)?
        var smallest = (first, quality)
        var encodes = 0
        while low <= high {
            let quality = (low + high) / 2
            let attempt = try encode(image, format, quality)
            encodes += 1
            if attempt.count < smallest.0.count { smallest = (attempt, quality) }
            if attempt.count <= limit { best = (attempt, quality); low = quality + 1 } else { high = quality - 1 }
        }
        let chosen = best ?? smallest
        return (chosen.0, chosen.1, encodes)
    }
}

extension ImageEncoding {
    /// `bitmap` encoded as this encoding says, as the pipeline encodes an answer: one encode at
    /// its quality, or the autoquality search, or best format's choice, then the `maxBytes`
    /// bound; with the source's rights when `keepsRights`. Returns the bytes and what they are.
    /// Blocking (the encodes run on the caller's thread).
    public func encode(_ bitmap: Bitmap, rights: RightsMetadata? = nil) throws -> (data: Data, made: ImageEncoding) {
        let (data, made, _) = try StillEncoder(encoding: self, rights: keepsRights ? rights : nil).encode(bitmap)
        return (data, made)
    }
}
