import CLCMS
import CPNG
import EaselSupport
import Foundation

/// An ICC profile embedded in an image: its bytes and what Little CMS reads from its header.
public struct ICCProfile: Sendable, Hashable {
    /// The colour space of the profile's device side.
    public enum ColorSpace: String, Sendable, Hashable {
        /// Gray, RGB or CMYK as the profile's header names it; `other` for any other colour space
        /// (Lab, XYZ, multi-ink…).
        case gray, rgb, cmyk, other
    }

    /// The profile's bytes, exactly as embedded in the image.
    public let data: Data
    /// The profile's description tag ("Display P3", "Adobe RGB (1998)"), empty when it has none.
    public let description: String
    /// The colour space of the profile's device side (the pixels it describes), from its header.
    public let colorSpace: ColorSpace
    /// Its description names sRGB: converting to sRGB would change nothing, so it is skipped.
    public let isSRGB: Bool

    /// Parses `data`. Nil when Little CMS cannot read it (a damaged profile).
    public init?(data: Data) {
        var info = easel_icc_info()
        var text = [CChar](repeating: 0, count: 256)
        var message = [CChar](repeating: 0, count: Int(EASEL_COLOR_MESSAGE_SIZE))
        let ok = data.withUnsafeBytes { raw in
            easel_icc_read(raw.baseAddress?.assumingMemoryBound(to: UInt8.self), raw.count, &info, &text, text.count, &message)
        }
        guard ok != 0 else { return nil }
        self.data = data
        description = cMessage(text)
        colorSpace = switch info.color_space {
        case Int32(EASEL_ICC_GRAY): .gray
        case Int32(EASEL_ICC_RGB): .rgb
        case Int32(EASEL_ICC_CMYK): .cmyk
        default: .other
        }
        isSRGB = info.is_srgb_like != 0
    }

    /// An RGB profile with the sRGB tone curve, D65 white and the given primaries (x, y of red,
    /// green and blue), e.g. `.displayP3`. For tests and tools that make wide-gamut images.
    /// `gamma` other than nil: a pure power curve instead of sRGB's.
    public static func rgb(primaries: [Double], description: String, gamma: Double? = nil) -> ICCProfile? {
        var output: UnsafeMutablePointer<UInt8>?
        var size = 0
        guard primaries.count == 6, easel_icc_make_rgb(0.3127, 0.3290, primaries, gamma ?? 0, description, &output, &size) != 0,
              let output else { return nil }
        defer { easel_color_free(output) }
        return ICCProfile(data: Data(bytes: output, count: size))
    }

    /// Display P3 (DCI-P3 primaries, D65, sRGB's tone curve): what recent phones write.
    public static var displayP3: ICCProfile? {
        rgb(primaries: [0.680, 0.320, 0.265, 0.690, 0.150, 0.060], description: "Display P3")
    }

    /// The profile an nclx colour box (H.273 code points, as AVIF and HEIF carry when they have
    /// no ICC profile) describes, when it is not sRGB: BT.2020 or Display P3 primaries with the
    /// sRGB curve (for sRGB and the BT.709-family transfers, as browsers show them), a linear
    /// or pure-gamma curve. Nil for sRGB itself, unspecified values, and HDR transfers (PQ,
    /// HLG), which would need tone mapping.
    static func nclx(primaries: Int, transfer: Int) -> ICCProfile? {
        let chromaticities: [Double]
        switch primaries {
        case 9: chromaticities = [0.708, 0.292, 0.170, 0.797, 0.131, 0.046]   // BT.2020
        case 12: chromaticities = [0.680, 0.320, 0.265, 0.690, 0.150, 0.060]  // SMPTE EG 432-1 (Display P3)
        case 1, 2: chromaticities = [0.64, 0.33, 0.30, 0.60, 0.15, 0.06]      // BT.709 (sRGB's), or unspecified
        default: return nil
        }
        let gamma: Double?
        switch transfer {
        case 1, 2, 6, 13, 14, 15: gamma = nil  // sRGB's curve
        case 4: gamma = 2.2
        case 5: gamma = 2.8
        case 8: gamma = 1
        default: return nil
        }
        if chromaticities[0] == 0.64, gamma == nil { return nil }  // sRGB: nothing to convert
        // The profile's bytes are made once per pair (kept as an array: see ColorConverter's cache).
        let key = primaries << 8 | transfer
        if let known = nclxCache.withLock({ $0[key] }) { return ICCProfile(data: Data(known)) }
        guard let made = rgb(primaries: chromaticities, description: "nclx \(primaries)/\(transfer)", gamma: gamma) else { return nil }
        nclxCache.withLock { $0[key] = Array(made.data) }
        return made
    }

    private static let nclxCache = Locked<[Int: [UInt8]]>([:])

    /// A CMYK profile whose table is the naive ink formula raised to `gamma` (for tests).
    package static func testCMYK(gamma: Double, gridPoints: Int = 9) -> ICCProfile? {
        var output: UnsafeMutablePointer<UInt8>?
        var size = 0
        guard easel_icc_make_test_cmyk(gamma, Int32(gridPoints), &output, &size) != 0, let output else { return nil }
        defer { easel_color_free(output) }
        return ICCProfile(data: Data(bytes: output, count: size))
    }
}

/// What an image's embedded profile turned out to be, read without decoding its pixels.
public enum EmbeddedProfile: Sendable, Hashable {
    /// The image embeds no profile (for AVIF and HEIC: no colour information other than sRGB's):
    /// the pixels are taken as sRGB.
    case none
    /// A profile Little CMS could parse.
    case profile(ICCProfile)
    /// Present but unreadable (damaged, truncated, chunks missing): ignored, the pixels are
    /// taken as sRGB.
    case damaged(reason: String)
    /// Larger than `DecodingLimits.maxProfileBytes`: the image is refused.
    case tooLarge(bytes: Int)

    /// The profile of `.profile`; nil for every other case (none, damaged, too large).
    public var profile: ICCProfile? {
        if case .profile(let profile) = self { profile } else { nil }
    }
}

/// Finds embedded profiles: JPEG `APP2 ICC_PROFILE` chunks reassembled in their order, PNG
/// `iCCP` (inflated by libspng), WebP `ICCP`. Bounds-checked; hostile input is `.damaged`.
enum ICCProfileReader {
    static func read(jpeg data: Data, limit: Int) -> EmbeddedProfile {
        data.withUnsafeBytes { bytes -> EmbeddedProfile in
            var chunks: [Int: Range<Int>] = [:]
            var declaredCount = 0, total = 0
            var offset = 2
            scan: while offset + 4 <= bytes.count, bytes[offset] == 0xFF {
                let marker = bytes[offset + 1]
                if marker == 0xFF { offset += 1; continue }
                if marker == 0xD8 || marker == 0x01 || (0xD0...0xD7).contains(marker) { offset += 2; continue }
                if marker == 0xDA || marker == 0xD9 { break scan }
                let length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
                guard length >= 2, offset + 2 + length <= bytes.count else { break scan }
                let start = offset + 4, end = offset + 2 + length
                if marker == 0xE2, end - start >= 14, bytes[start..<(start + 12)].elementsEqual("ICC_PROFILE\0".utf8) {
                    let sequence = Int(bytes[start + 12]), count = Int(bytes[start + 13])
                    guard sequence >= 1, count >= 1, sequence <= count, declaredCount == 0 || declaredCount == count,
                          chunks[sequence] == nil else {
                        return .damaged(reason: "ICC_PROFILE chunks out of order or repeated")
                    }
                    declaredCount = count
                    chunks[sequence] = (start + 14)..<end
                    total += end - start - 14
                    if total > limit { return .tooLarge(bytes: total) }
                }
                offset = end
            }
            guard declaredCount > 0 else { return .none }
            guard chunks.count == declaredCount else {
                return .damaged(reason: "\(declaredCount - chunks.count) of \(declaredCount) ICC_PROFILE chunks missing")
            }
            var profile = Data(capacity: total)
            for sequence in 1...declaredCount { profile.append(contentsOf: bytes[chunks[sequence]!]) }
            return parse(profile)
        }
    }

    static func read(png data: Data, limit: Int) -> EmbeddedProfile {
        // Cheap check first: no iCCP chunk before the image data, no work.
        let present = data.withUnsafeBytes { raw -> Bool in
            var offset = 8
            while offset + 12 <= raw.count {
                let length = Int(raw[offset]) << 24 | Int(raw[offset + 1]) << 16 | Int(raw[offset + 2]) << 8 | Int(raw[offset + 3])
                let type = raw[(offset + 4)..<(offset + 8)]
                if type.elementsEqual("iCCP".utf8) { return true }
                if type.elementsEqual("IDAT".utf8) || type.elementsEqual("IEND".utf8) || offset + 12 + length > raw.count { return false }
                offset += 12 + length
            }
            return false
        }
        guard present else { return .none }
        var output: UnsafeMutablePointer<UInt8>?
        var size = 0
        var message = [CChar](repeating: 0, count: Int(EASEL_PNG_MESSAGE_SIZE))
        let result = data.withUnsafeBytes { raw in
            easel_png_read_iccp(raw.baseAddress!.assumingMemoryBound(to: UInt8.self), raw.count, limit, &output, &size, &message)
        }
        defer { easel_png_free(output) }
        switch result {
        case 1: return output.map { parse(Data(bytes: $0, count: size)) } ?? .none
        case -1: return .tooLarge(bytes: size)
        case 2: return .none
        default: return .damaged(reason: cMessage(message))
        }
    }

    static func read(webp data: Data, limit: Int) -> EmbeddedProfile {
        data.withUnsafeBytes { raw -> EmbeddedProfile in
            var offset = 12
            while offset + 8 <= raw.count {
                let length = Int(raw[offset + 4]) | Int(raw[offset + 5]) << 8 | Int(raw[offset + 6]) << 16 | Int(raw[offset + 7]) << 24
                guard offset + 8 + length <= raw.count else { return .none }
                if raw[offset..<(offset + 4)].elementsEqual("ICCP".utf8) {
                    guard length <= limit else { return .tooLarge(bytes: length) }
                    return parse(Data(raw[(offset + 8)..<(offset + 8 + length)]))
                }
                offset += 8 + length + (length % 2)
            }
            return .none
        }
    }

    /// The profile of an AVIF or HEIC: the ICC bytes its library handed over (`size` is the
    /// profile's size even when it was over the limit and not copied), else the profile its
    /// nclx primaries and transfer describe when they are not sRGB's.
    static func read(container icc: UnsafePointer<UInt8>?, size: Int, limit: Int, primaries: Int, transfer: Int) -> EmbeddedProfile {
        if size > limit { return .tooLarge(bytes: size) }
        if let icc, size > 0 { return parse(Data(bytes: icc, count: size)) }
        return ICCProfile.nclx(primaries: primaries, transfer: transfer).map { .profile($0) } ?? .none
    }

    static func parse(_ data: Data) -> EmbeddedProfile {
        guard let profile = ICCProfile(data: data) else { return .damaged(reason: "Little CMS could not parse the profile") }
        return .profile(profile)
    }
}
