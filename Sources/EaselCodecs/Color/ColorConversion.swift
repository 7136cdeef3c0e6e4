import CLCMS
import EaselSupport
import Foundation
import Logging

/// Pixels converted between ICC profiles with Little CMS (relative colorimetric, black point
/// compensation).
public enum ColorConversion {
    /// RGBA pixels from `source` to `target` (nil: sRGB) — e.g. sRGB pixels into Display P3.
    /// Nil when Little CMS refuses a profile or it is not an RGB profile.
    public static func convert(_ bitmap: Bitmap, from source: ICCProfile?, to target: ICCProfile?) -> Bitmap? {
        ColorConverter.convert(bitmap, from: source, to: target)
    }
}

/// What decoding does with an embedded ICC profile.
public enum ColorHandling: Sendable, Hashable {
    /// Convert the pixels to sRGB with Little CMS (relative colorimetric intent with black point
    /// compensation), before any processing. The default: browsers take untagged images as
    /// sRGB, and outputs carry no profile.
    case convertToSRGB
    /// Leave the pixels in the source's encoding (the caller keeps `ImageInfo.colorProfile`
    /// and embeds it in what it writes).
    case keepSourceProfile
}

/// Little CMS transforms from embedded profiles to sRGB, made once per profile and pixel
/// layout and kept (a transform takes ~1 ms to build; converting a thumbnail's pixels, far less).
enum ColorConverter {
    enum Layout: Int32 {
        case rgba = 0      // EASEL_PIXELS_RGBA8
        case gray = 1      // EASEL_PIXELS_GRAY8
        case grayInRGBA = 2 // EASEL_PIXELS_GRAYX8
        case cmyk = 3      // EASEL_PIXELS_CMYK8
        case cmykInverted = 4 // EASEL_PIXELS_CMYK8_INVERTED
    }

    /// An lcms transform. `@unchecked Sendable` is safe: the handle is made with
    /// cmsFLAGS_NOCACHE (Little CMS then keeps no per-call state in it, and documents
    /// cmsDoTransform on it as safe from several threads at once), is never changed after
    /// creation, and is freed only in deinit, when no thread can hold it.
    final class Transform: @unchecked Sendable {
        let handle: UnsafeMutableRawPointer
        init(handle: UnsafeMutableRawPointer) { self.handle = handle }
        deinit { easel_color_transform_free(handle) }
    }

    /// Transforms by a checksum of the profile and layouts; each entry keeps the profile's bytes
    /// and is used only when they are equal, so no crafted profile can share a transform with
    /// another (a checksum can collide). The bytes are kept as an array: a `Data` held in a
    /// global table carries tag bits in its reference, which LeakSanitizer cannot follow.
    private struct Entry {
        var profile: [UInt8]
        var input: Layout
        var output: Layout
        var result: Result<Transform, CodecError>
    }

    private static let cache = Locked<(entries: [UInt64: [Entry]], count: Int, bytes: Int)>(([:], 0, 0))
    /// At most 64 transforms and 16 MiB of profiles kept (then it starts again empty), and at
    /// most 4 per checksum (a crafted collision cannot grow one list).
    private static let cacheLimit = (entries: 64, bytes: 16 << 20, perChecksum: 4)
    static let logger = Logger(label: "easel.color")

    /// The transform from `profile` (its pixels in `input`) to sRGB in `output`; a profile
    /// Little CMS refuses is logged once and remembered as refused.
    static func transform(_ profile: ICCProfile, input: Layout, output: Layout) -> Transform? {
        let key = profile.data.withUnsafeBytes { Checksum.compute($0, seed: UInt64(input.rawValue) << 8 | UInt64(output.rawValue)) }
        let known = cache.withLock { cache in
            cache.entries[key]?.first { entry in
                entry.input == input && entry.output == output && entry.profile.count == profile.data.count
                    && entry.profile.withUnsafeBytes { stored in profile.data.withUnsafeBytes { stored.elementsEqual($0) } }
            }?.result
        }
        if let known { return try? known.get() }
        var message = [CChar](repeating: 0, count: Int(EASEL_COLOR_MESSAGE_SIZE))
        let handle = profile.data.withUnsafeBytes { raw in
            easel_color_transform_create(raw.baseAddress?.assumingMemoryBound(to: UInt8.self), raw.count, input.rawValue,
                                         nil, 0, output.rawValue, &message)
        }
        let result: Result<Transform, CodecError> = handle.map { .success(Transform(handle: $0)) }
            ?? .failure(.invalidParameters(cMessage(message)))
        if handle == nil {
            logger.warning("ICC profile ignored: the pixels are taken as sRGB", metadata: [
                "profile": "\(profile.description)", "reason": "\(cMessage(message))"])
        }
        cache.withLock { cache in
            if cache.count >= cacheLimit.entries || cache.bytes + profile.data.count > cacheLimit.bytes { cache = ([:], 0, 0) }
            guard (cache.entries[key]?.count ?? 0) < cacheLimit.perChecksum, profile.data.count <= cacheLimit.bytes else { return }
            cache.entries[key, default: []].append(Entry(profile: Array(profile.data), input: input, output: output, result: result))
            cache.count += 1
            cache.bytes += profile.data.count
        }
        return try? result.get()
    }

    /// Converts `bitmap` from `profile` to sRGB in place. `cmyk` says the RGBA buffer holds raw
    /// CMYK samples (`.cmyk` or `.cmykInverted`); those are always turned into RGBA, with the
    /// naive formula when the profile cannot be used. False when nothing was converted.
    @discardableResult
    static func convertToSRGB(_ bitmap: inout Bitmap, from profile: ICCProfile, cmyk: Layout? = nil) -> Bool {
        let input: Layout, output: Layout
        switch (bitmap.pixelFormat, profile.colorSpace, cmyk) {
        case (.rgba8, .cmyk, let layout?): (input, output) = (layout, .rgba)
        case (.rgba8, _, let layout?):
            naiveCMYK(&bitmap, inverted: layout == .cmykInverted)
            return false
        case (.rgba8, .rgb, nil): (input, output) = (.rgba, .rgba)
        case (.rgba8, .gray, nil): (input, output) = (.grayInRGBA, .rgba)
        case (.gray8, .gray, nil): (input, output) = (.gray, .gray)
        default:
            logger.warning("ICC profile ignored: its colour space does not match the pixels", metadata: [
                "profile": "\(profile.description)", "space": "\(profile.colorSpace)", "pixels": "\(bitmap.pixelFormat)"])
            return false
        }
        if cmyk == nil, profile.isSRGB { return false }
        guard let transform = transform(profile, input: input, output: output) else {
            if let cmyk { naiveCMYK(&bitmap, inverted: cmyk == .cmykInverted) }
            return false
        }
        apply(transform, to: &bitmap, settingOpaque: cmyk != nil)
        return true
    }

    /// RGBA pixels converted from `source` to `target` (nil: sRGB), e.g. sRGB photos turned
    /// into Display P3 pixels for tests. Nil when Little CMS refuses the profiles.
    static func convert(_ bitmap: Bitmap, from source: ICCProfile?, to target: ICCProfile?) -> Bitmap? {
        var message = [CChar](repeating: 0, count: Int(EASEL_COLOR_MESSAGE_SIZE))
        let handle = withOptionalBytes(source?.data) { input, inputSize in
            withOptionalBytes(target?.data) { output, outputSize in
                easel_color_transform_create(input, inputSize, Layout.rgba.rawValue, output, outputSize, Layout.rgba.rawValue, &message)
            }
        }
        guard let handle else { return nil }
        let transform = Transform(handle: handle)
        var result = bitmap.converted(to: .rgba8)
        apply(transform, to: &result)
        return result
    }

    /// RGBA pixels from `profile` to sRGB through Little CMS's own transform, never the
    /// matrix/TRC fast path (for tests that compare the two).
    package static func convertWithLittleCMS(_ bitmap: Bitmap, from profile: ICCProfile) -> Bitmap? {
        var message = [CChar](repeating: 0, count: Int(EASEL_COLOR_MESSAGE_SIZE))
        let handle = profile.data.withUnsafeBytes { raw in
            easel_color_transform_create_general(raw.baseAddress?.assumingMemoryBound(to: UInt8.self), raw.count,
                                                 Layout.rgba.rawValue, nil, 0, Layout.rgba.rawValue, &message)
        }
        guard let handle else { return nil }
        let transform = Transform(handle: handle)
        var result = bitmap
        apply(transform, to: &result)
        return result
    }

    /// Converts `bitmap`'s pixels in place (`settingOpaque`: the 4th byte of each becomes 255,
    /// as CMYK converted in place leaves K there).
    private static func apply(_ transform: Transform, to bitmap: inout Bitmap, settingOpaque: Bool = false) {
        let width = bitmap.width, height = bitmap.height, rowBytes = bitmap.rowBytes
        bitmap.withUnsafeMutableBytes { pixels in
            let base = pixels.baseAddress!.assumingMemoryBound(to: UInt8.self)
            easel_color_transform_apply(transform.handle, base, base, Int32(width), Int32(height), rowBytes, rowBytes,
                                        settingOpaque ? 1 : 0)
        }
    }

    /// R = (1 − C)(1 − K) and so on, for CMYK without a usable profile.
    static func naiveCMYK(_ bitmap: inout Bitmap, inverted: Bool) {
        let width = bitmap.width, height = bitmap.height, rowBytes = bitmap.rowBytes
        bitmap.withUnsafeMutableBytes { pixels in
            for y in 0..<height {
                let row = pixels.baseAddress!.advanced(by: y * rowBytes).assumingMemoryBound(to: UInt8.self)
                for x in 0..<width {
                    let p = row + 4 * x
                    var c = Int(p[0]), m = Int(p[1]), ye = Int(p[2]), k = Int(p[3])
                    if !inverted { c = 255 - c; m = 255 - m; ye = 255 - ye; k = 255 - k }
                    p[0] = UInt8(c * k / 255); p[1] = UInt8(m * k / 255); p[2] = UInt8(ye * k / 255); p[3] = 255
                }
            }
        }
    }
}
