import CJPEG
import Foundation

/// JPEG through libjpeg-turbo, with shrink-on-load: the DCT scales by 1/2, 1/4 or 1/8 while
/// decoding, so a thumbnail of a large photo never decodes the full image.
package enum JPEGCodec {
    static func info(_ data: Data, limits: DecodingLimits = .default) throws -> ImageInfo {
        var header = easel_jpeg_header()
        try call(data) { easel_jpeg_read_header($0, $1, &header, $2) }
        var info = ImageInfo(fileType: .jpeg, width: Int(header.width), height: Int(header.height), hasAlpha: false, isGrayscale: header.components == 1, isProgressive: header.progressive != 0)
        info.decoderWorkingBytes = Int(clamping: header.coefficient_bytes)
        info.exif = ExifReader.read(jpeg: data)
        info.colorProfile = ICCProfileReader.read(jpeg: data, limit: limits.maxProfileBytes)
        return info
    }

    /// The largest DCT scale denominator (8, 4, 2 or 1) whose output still covers
    /// `minimumSize`, for an image of `width × height`.
    static func scaleDenominator(width: Int, height: Int, covering minimumSize: (width: Int, height: Int)?) -> Int {
        guard let minimumSize else { return 1 }
        for denominator in [8, 4, 2] {
            let scaledWidth = (width + denominator - 1) / denominator
            let scaledHeight = (height + denominator - 1) / denominator
            if scaledWidth >= minimumSize.width, scaledHeight >= minimumSize.height { return denominator }
        }
        return 1
    }

    /// With `rawCMYK`, a CMYK file's samples are left as they are (the second value says how:
    /// `.cmyk` or Adobe's `.cmykInverted`) for its profile to convert; nil when the pixels are RGBA
    /// or gray.
    static func decode(_ data: Data, info: ImageInfo, covering minimumSize: (width: Int, height: Int)?,
                       pixelFormat: Bitmap.PixelFormat, rawCMYK: Bool = false,
                       limits: DecodingLimits, dcOnlyScans: Bool = true) throws -> (Bitmap, ColorConverter.Layout?) {
        let denominator = scaleDenominator(width: info.width, height: info.height, covering: minimumSize)
        // libjpeg's output size at 1/denominator: jdiv_round_up(size, denominator).
        let width = (info.width + denominator - 1) / denominator, height = (info.height + denominator - 1) / denominator
        var bitmap = Bitmap(width: width, height: height, pixelFormat: pixelFormat)
        let rowBytes = bitmap.rowBytes
        var layout: Int32 = 0
        try bitmap.withUnsafeMutableBytes { pixels in
            try call(data, scanLimit: limits.maxProgressiveScans) { bytes, count, message in
                // The shim checks the file really has `info`'s size: the buffer was sized from it.
                easel_jpeg_decode_checked(bytes, count, Int32(denominator), pixelFormat == .gray8 ? 1 : 0,
                                          Int32(info.width), Int32(info.height), Int32(width), Int32(height),
                                          pixels.baseAddress!.assumingMemoryBound(to: UInt8.self), rowBytes,
                                          Int32(clamping: limits.maxProgressiveScans), rawCMYK ? 1 : 0, &layout,
                                          dcOnlyScans && info.isProgressive ? 1 : 0, message)
            }
        }
        bitmap.markOpaque()
        if info.width % denominator != 0 || info.height % denominator != 0 {
            bitmap.imageExtent = Resampler.Extent(width: Double(info.width) / Double(denominator),
                                                  height: Double(info.height) / Double(denominator))
        }
        return (bitmap, layout == 1 ? .cmyk : layout == 2 ? .cmykInverted : nil)
    }

    static func encode(_ bitmap: Bitmap, quality: Int, progressive: Bool, fullChroma: Bool = false, iccProfile: Data? = nil) throws -> Data {
        var output: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        var message = [CChar](repeating: 0, count: Int(EASEL_JPEG_MESSAGE_SIZE))
        let ok = bitmap.withUnsafeBytes { pixels in
            withOptionalBytes(iccProfile) { icc, iccSize in
                easel_jpeg_encode(pixels.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(bitmap.width),
                                  Int32(bitmap.height), bitmap.rowBytes, Int32(bitmap.pixelFormat.bytesPerPixel),
                                  Int32(min(max(quality, 1), 100)), progressive ? 1 : 0, fullChroma ? 1 : 0, icc, iccSize,
                                  &output, &size, &message)
            }
        }
        guard ok != 0, let output else {
            throw CodecError.encodingFailed(format: .jpeg, reason: cMessage(message))
        }
        defer { easel_jpeg_free(output) }
        return Data(bytes: output, count: Int(size))
    }

    /// A YCCK JPEG of inverted CMYK pixels, as Adobe applications write them (for tests).
    package static func encodeCMYK(width: Int, height: Int, quality: Int, iccProfile: Data? = nil,
                                   pixel: (Int, Int) -> (c: UInt8, m: UInt8, y: UInt8, k: UInt8)) throws -> Data {
        var bytes = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height { for x in 0..<width {
            let p = pixel(x, y), o = (y * width + x) * 4
            bytes[o] = 255 - p.c; bytes[o + 1] = 255 - p.m; bytes[o + 2] = 255 - p.y; bytes[o + 3] = 255 - p.k
        } }
        var output: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        var message = [CChar](repeating: 0, count: Int(EASEL_JPEG_MESSAGE_SIZE))
        let ok = withOptionalBytes(iccProfile) { icc, iccSize in
            easel_jpeg_encode_cmyk(bytes, Int32(width), Int32(height), width * 4, Int32(quality), icc, iccSize, &output, &size, &message)
        }
        guard ok != 0, let output else { throw CodecError.encodingFailed(format: .jpeg, reason: cMessage(message)) }
        defer { easel_jpeg_free(output) }
        return Data(bytes: output, count: Int(size))
    }

    /// Runs a shim call on the bytes of `data`: 0 is `.corrupt` with libjpeg's message, -1
    /// means the progressive scan limit was hit.
    private static func call(_ data: Data, scanLimit: Int = DecodingLimits.default.maxProgressiveScans,
                             _ body: (UnsafePointer<UInt8>, Int, UnsafeMutablePointer<CChar>) -> Int32) throws {
        if try callShim(data, format: .jpeg, messageSize: EASEL_JPEG_MESSAGE_SIZE, body) == -1 {
            throw CodecError.tooManyScans(limit: scanLimit)
        }
    }

    /// `data` without the AC scans a decode at 1/8 does not use (`easel_jpeg_strip_dc_only`),
    /// or nil when that does not apply: for tests and the fuzzer.
    package static func dcOnlyStream(_ data: Data, maxScans: Int = 0) -> Data? {
        guard data.count > 4 else { return nil }
        var output = Data(count: data.count)
        var length = 0
        let status = data.withUnsafeBytes { input in
            output.withUnsafeMutableBytes { out in
                easel_jpeg_strip_dc_only(input.baseAddress!.assumingMemoryBound(to: UInt8.self), input.count,
                                         out.baseAddress!.assumingMemoryBound(to: UInt8.self), &length, Int32(clamping: maxScans))
            }
        }
        guard status == 0 else { return nil }
        return output.prefix(length)
    }
}
