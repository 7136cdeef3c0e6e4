import CJXL
import EaselSupport
import Foundation

/// JPEG XL through libjxl 0.7, read and written: the first frame of a still or an animation,
/// 8-bit RGBA (wider samples scaled to 8), gray as RGB, alpha, the codestream's orientation
/// applied as EXIF's is, its colour space as an ICC profile converted to sRGB like any other.
/// libjxl works in float planes, about 18 bytes a pixel while decoding (djxl on a 12 MP image
/// peaked at 218 MB), and allocates them itself (its memory-manager hook sees only its small
/// state): its memory is capped through the pixels it may decode,
/// `DecodingLimits.maxJPEGXLPixels` (25 MP by default, about 450 MB), checked from the header.
enum JXLCodec {
    static func info(_ data: Data, limits: DecodingLimits = .default) throws -> ImageInfo {
        var header = easel_jxl_info()
        _ = try callShim(data, format: .jxl, messageSize: EASEL_JXL_MESSAGE_SIZE) { bytes, count, message in
            easel_jxl_read_info(bytes, count, &header, nil, 0, message)
        }
        var profile = EmbeddedProfile.none
        if header.icc_size > 0 {
            if header.icc_size > limits.maxProfileBytes {
                profile = .tooLarge(bytes: header.icc_size)
            } else {
                var icc = [UInt8](repeating: 0, count: header.icc_size)
                _ = try icc.withUnsafeMutableBufferPointer { buffer in
                    try callShim(data, format: .jxl, messageSize: EASEL_JXL_MESSAGE_SIZE) { bytes, count, message in
                        easel_jxl_read_info(bytes, count, &header, buffer.baseAddress, buffer.count, message)
                    }
                }
                // An sRGB profile is left out: nothing to convert.
                if case .profile(let parsed) = ICCProfileReader.parse(Data(icc)), !parsed.isSRGB { profile = .profile(parsed) }
            }
        }
        guard Int.checkedProduct(Int(header.width), Int(header.height)).map({ $0 <= limits.maxJPEGXLPixels }) ?? false else {
            throw CodecError.tooManyPixels(width: Int(header.width), height: Int(header.height), limit: limits.maxJPEGXLPixels)
        }
        var info = ImageInfo(fileType: .jxl, width: Int(header.width), height: Int(header.height), hasAlpha: header.has_alpha != 0, isGrayscale: header.is_gray != 0, isProgressive: false, isAnimated: header.is_animated != 0)
        info.colorProfile = profile
        info.bitDepth = Int(header.bits_per_sample)
        info.containerOrientation = Int(header.orientation)
        return info
    }

    /// The first frame as stored (the caller applies the orientation).
    static func decode(_ data: Data, info: ImageInfo, limits: DecodingLimits) throws -> Bitmap {
        guard info.pixelCount <= limits.maxJPEGXLPixels else {
            throw CodecError.tooManyPixels(width: info.width, height: info.height, limit: limits.maxJPEGXLPixels)
        }
        var bitmap = Bitmap(width: info.width, height: info.height, pixelFormat: .rgba8)
        let rowBytes = bitmap.rowBytes
        try bitmap.withUnsafeMutableBytes { pixels in
            _ = try callShim(data, format: .jxl, messageSize: EASEL_JXL_MESSAGE_SIZE) { bytes, count, message in
                easel_jxl_decode(bytes, count, pixels.baseAddress!.assumingMemoryBound(to: UInt8.self), rowBytes, Int32(info.width),
                                 Int32(info.height), message)
            }
        }
        if !info.hasAlpha { bitmap.markOpaque() }
        return bitmap
    }

    /// A JPEG XL codestream at `quality` (cjxl's scale; 100 is lossless) and `effort` (1–9).
    static func encode(_ bitmap: Bitmap, quality: Int, effort: Int) throws -> Data {
        let rgba = bitmap.converted(to: .rgba8)
        var output: UnsafeMutablePointer<UInt8>?
        var size = 0
        var message = [CChar](repeating: 0, count: Int(EASEL_JXL_MESSAGE_SIZE))
        let ok = rgba.withUnsafeBytes { pixels in
            easel_jxl_encode(pixels.baseAddress!.assumingMemoryBound(to: UInt8.self), rgba.rowBytes, Int32(rgba.width), Int32(rgba.height),
                             rgba.isKnownOpaque ? 0 : 1, Int32(quality), Int32(effort), &output, &size, &message)
        }
        try checkLibrary(ok, library: "libjxl", message: cMessage(&message))
        guard ok != 0, let output else { throw CodecError.encodingFailed(format: .jxl, reason: cMessage(&message)) }
        defer { free(output) }
        return Data(bytes: output, count: size)
    }
}
