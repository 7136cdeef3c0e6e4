import CAVIF
import CHEIF
import Foundation

/// AVIF through libavif (dav1d decodes; aom encodes): the first frame, alpha, 10/12-bit scaled
/// to 8, the container's rotation and mirror applied. Limits on pixels and frames are checked
/// by libavif from the container, before any pixel memory is allocated.
enum AVIFCodec {
    static func info(_ data: Data, limits: DecodingLimits) throws -> ImageInfo {
        var header = easel_avif_header()
        var icc: UnsafeMutablePointer<UInt8>?
        var iccSize = 0
        let result = try callShim(data, format: .avif, messageSize: EASEL_AVIF_MESSAGE_SIZE) { bytes, count, message in
            easel_avif_read_header(bytes, count, UInt32(clamping: limits.maxPixels), UInt32(clamping: limits.maxFrames), &header,
                                   limits.maxProfileBytes, &icc, &iccSize, message)
        }
        defer { easel_avif_free(icc) }
        if result < 0 { throw limitError(result, width: Int(header.width), height: Int(header.height), limits: limits) }
        let profile = ICCProfileReader.read(container: icc, size: iccSize, limit: limits.maxProfileBytes,
                                            primaries: Int(header.color_primaries), transfer: Int(header.transfer))
        // The container's transform as one EXIF orientation: irot turns the image a quarter
        // turn counter-clockwise per step, then imir mirrors it (mode 0: top and bottom
        // exchanged, 1: left and right).
        let rotation = Int(header.rotation) & 3, mirror = Int(header.mirror)
        let orientation: Int = switch (rotation, mirror) {
        case (0, 0), (2, 1): 4
        case (0, 1), (2, 0): 2
        case (1, 0), (3, 1): 5
        case (1, 1), (3, 0): 7
        case (1, _): 8
        case (2, _): 3
        case (3, _): 6
        default: 1
        }
        var info = ImageInfo(fileType: .avif, width: Int(header.width), height: Int(header.height), hasAlpha: header.has_alpha != 0, isGrayscale: false, isProgressive: false, isAnimated: header.frame_count > 1)
        info.colorProfile = profile
        info.frameCount = Int(header.frame_count)
        info.bitDepth = Int(header.depth)
        info.containerOrientation = orientation
        return info
    }

    /// -1: the pixel limit; -2: the frame limit.
    static func limitError(_ result: Int32, width: Int, height: Int, limits: DecodingLimits) -> CodecError {
        result == -1 ? .tooManyPixels(width: width, height: height, limit: limits.maxPixels) : .tooManyFrames(limit: limits.maxFrames)
    }

    static func decode(_ data: Data, info: ImageInfo, limits: DecodingLimits) throws -> Bitmap {
        var bitmap = Bitmap(width: info.width, height: info.height, pixelFormat: .rgba8)
        let rowBytes = bitmap.rowBytes
        var result: Int32 = 0
        try bitmap.withUnsafeMutableBytes { pixels in
            result = try callShim(data, format: .avif, messageSize: EASEL_AVIF_MESSAGE_SIZE) { bytes, count, message in
                easel_avif_decode(bytes, count, UInt32(clamping: limits.maxPixels), UInt32(clamping: limits.maxFrames),
                                  Int32(info.width), Int32(info.height), pixels.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                  rowBytes, message)
            }
        }
        if result < 0 { throw limitError(result, width: info.width, height: info.height, limits: limits) }
        if !info.hasAlpha { bitmap.markOpaque() }
        return bitmap
    }

    /// Server defaults: speed 8 (aom's fast presets; a 256 px thumbnail in a few tens of ms on
    /// one core) and one thread (the server runs many encodes at once).
    static func encode(_ bitmap: Bitmap, quality: Int, speed: Int) throws -> Data {
        let rgba = bitmap.converted(to: .rgba8)
        var output: UnsafeMutablePointer<UInt8>?
        var size = 0
        var message = [CChar](repeating: 0, count: Int(EASEL_AVIF_MESSAGE_SIZE))
        let ok = rgba.withUnsafeBytes { pixels in
            easel_avif_encode(pixels.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(rgba.width), Int32(rgba.height),
                              rgba.rowBytes, rgba.isKnownOpaque ? 0 : 1, Int32(quality), Int32(speed), 1, &output, &size, &message)
        }
        try checkLibrary(ok, library: "libavif", message: cMessage(message))
        guard ok != 0, let output else { throw CodecError.encodingFailed(format: .avif, reason: cMessage(message)) }
        defer { easel_avif_free(output) }
        return Data(bytes: output, count: size)
    }
}

/// HEIC/HEIF through libheif (libde265 decodes HEVC): the primary image, upright (libheif
/// applies irot/imir), alpha, HDR scaled to 8 bits; written with libheif's HEVC encoder (x265).
enum HEIFCodec {
    /// Whether libheif here decodes AV1 (and so AVIF thumbnails).
    static let decodesAV1 = easel_heif_decodes_av1() != 0

    /// HEIC of `bitmap` (alpha kept when it has any) at libheif's quality 1–100.
    static func encode(_ bitmap: Bitmap, quality: Int) throws -> Data {
        let rgba = bitmap.converted(to: .rgba8)
        var output: UnsafeMutablePointer<UInt8>?
        var size = 0
        var message = [CChar](repeating: 0, count: Int(EASEL_HEIF_MESSAGE_SIZE))
        let ok = rgba.withUnsafeBytes { pixels in
            easel_heif_encode(pixels.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(rgba.width), Int32(rgba.height),
                              rgba.rowBytes, rgba.hasTransparentPixels ? 1 : 0, Int32(quality), &output, &size, &message)
        }
        try checkLibrary(ok, library: "libheif", message: cMessage(message))
        guard ok != 0, let output else { throw CodecError.encodingFailed(format: .heic, reason: cMessage(message)) }
        defer { easel_heif_free(output) }
        return Data(bytes: output, count: size)
    }

    /// The primary image's facts, or with `embeddedThumbnail` its first embedded thumbnail's
    /// when it has one (`ImageInfo.isEmbeddedThumbnail`; libheif reads AVIF containers too).
    static func info(_ data: Data, limits: DecodingLimits, embeddedThumbnail: Bool = false, fileType: ImageFileType = .heic) throws -> ImageInfo {
        var header = easel_heif_header()
        var icc: UnsafeMutablePointer<UInt8>?
        var iccSize = 0
        _ = try callShim(data, format: fileType, messageSize: EASEL_HEIF_MESSAGE_SIZE) { bytes, count, message in
            easel_heif_read_header(bytes, count, embeddedThumbnail ? 1 : 0, &header, limits.maxProfileBytes, &icc, &iccSize, message)
        }
        defer { easel_heif_free(icc) }
        let profile = ICCProfileReader.read(container: icc, size: iccSize, limit: limits.maxProfileBytes,
                                            primaries: Int(header.color_primaries), transfer: Int(header.transfer))
        var info = ImageInfo(fileType: fileType, width: Int(header.width), height: Int(header.height), hasAlpha: header.has_alpha != 0, isGrayscale: false, isProgressive: false)
        info.colorProfile = profile
        info.frameCount = Int(header.image_count)
        info.bitDepth = Int(header.depth)
        info.containerOrientation = 1
        info.isEmbeddedThumbnail = header.is_thumbnail != 0
        return info
    }

    static func decode(_ data: Data, info: ImageInfo) throws -> Bitmap {
        var bitmap = Bitmap(width: info.width, height: info.height, pixelFormat: .rgba8)
        let rowBytes = bitmap.rowBytes
        try bitmap.withUnsafeMutableBytes { pixels in
            _ = try callShim(data, format: info.fileType, messageSize: EASEL_HEIF_MESSAGE_SIZE) { bytes, count, message in
                easel_heif_decode(bytes, count, info.isEmbeddedThumbnail ? 1 : 0, Int32(info.width), Int32(info.height),
                                  pixels.baseAddress!.assumingMemoryBound(to: UInt8.self), rowBytes, message)
            }
        }
        if !info.hasAlpha { bitmap.markOpaque() }
        return bitmap
    }
}
