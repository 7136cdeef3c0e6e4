import CPNG
import Foundation

/// PNG decoding through libspng (with a fast path for 8-bit gray, RGB and RGBA: ISA-L's inflate
/// a row at a time and SSE unfiltering, `easel_png_decode`) and encoding through libpng: every colour type and bit depth, palettes,
/// tRNS and interlacing come out as 8-bit RGBA (straight alpha) or gray.
enum PNGCodec {
    static func info(_ data: Data, limits: DecodingLimits = .default) throws -> ImageInfo {
        var header = easel_png_header()
        try call(data) { easel_png_read_header($0, $1, &header, $2) }
        var info = ImageInfo(fileType: .png, width: Int(header.width), height: Int(header.height), hasAlpha: header.has_alpha != 0, isGrayscale: header.is_gray != 0, isProgressive: header.interlaced != 0)
        info.exif = ExifReader.read(png: data)
        info.colorProfile = ICCProfileReader.read(png: data, limit: limits.maxProfileBytes)
        info.bitDepth = Int(header.bit_depth)
        return info
    }

    /// Whether 8-bit gray, RGB and RGBA files take the fast path (`easel_png_decode`, and the
    /// shrink on load's `easel_png_decode_shrunk`):
    /// yes, unless `EASEL_PNG_FAST=0` (side-by-side benchmarks).
    static let fastPathByDefault: Bool = {
        guard let setting = ProcessInfo.processInfo.environment["EASEL_PNG_FAST"]?.lowercased() else { return true }
        return !["0", "false", "off"].contains(setting)
    }()

    /// Whether a decode of this image may shrink on load: not interlaced (its rows come in
    /// order, so they can be summed into blocks as they are decoded).
    static func scales(_ info: ImageInfo) -> Bool { info.fileType == .png && !info.isProgressive }

    /// The image; with `minimumSize` (stored orientation) and a non-interlaced file, shrunk on
    /// load by the largest of 1/2, 1/4 and 1/8 that still covers it (as JPEG's DCT scaling):
    /// decoded a row at a time, each block becoming its mean, so the full-size bitmap never
    /// exists (`easel_png_decode_shrunk`).
    /// `fastPath: false`: libspng for every file (the reference the fast path is checked against).
    static func decode(_ data: Data, info: ImageInfo, covering minimumSize: (width: Int, height: Int)? = nil,
                       pixelFormat: Bitmap.PixelFormat, fastPath: Bool = fastPathByDefault) throws -> Bitmap {
        let factor = scales(info) ? JPEGCodec.scaleDenominator(width: info.width, height: info.height, covering: minimumSize) : 1
        if factor > 1 {
            var shrunk = Bitmap(width: (info.width + factor - 1) / factor, height: (info.height + factor - 1) / factor, pixelFormat: .rgba8)
            let rowBytes = shrunk.rowBytes
            try shrunk.withUnsafeMutableBytes { pixels in
                try call(data) { bytes, count, message in
                    easel_png_decode_shrunk(bytes, count, pixels.baseAddress!.assumingMemoryBound(to: UInt8.self), rowBytes,
                                            Int32(info.width), Int32(info.height), Int32(factor), fastPath ? 1 : 0, message)
                }
            }
            if !info.hasAlpha { shrunk.markOpaque() }
            return shrunk.converted(to: pixelFormat)
        }
        var bitmap = Bitmap(width: info.width, height: info.height, pixelFormat: pixelFormat)
        let rowBytes = bitmap.rowBytes
        try bitmap.withUnsafeMutableBytes { pixels in
            try call(data) { bytes, count, message in
                easel_png_decode(bytes, count, pixelFormat == .gray8 ? 1 : 0,
                                 pixels.baseAddress!.assumingMemoryBound(to: UInt8.self), rowBytes,
                                 Int32(info.width), Int32(info.height), fastPath ? 1 : 0, message)
            }
        }
        if !info.hasAlpha { bitmap.markOpaque() }
        return bitmap
    }

    static func encode(_ bitmap: Bitmap, compressionLevel: Int, iccProfile: Data? = nil) throws -> Data {
        var output: UnsafeMutablePointer<UInt8>?
        var size = 0
        var message = [CChar](repeating: 0, count: Int(EASEL_PNG_MESSAGE_SIZE))
        let ok = bitmap.withUnsafeBytes { pixels in
            withOptionalBytes(iccProfile) { icc, iccSize in
                easel_png_encode(pixels.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(bitmap.width),
                                 Int32(bitmap.height), bitmap.rowBytes, Int32(bitmap.pixelFormat.bytesPerPixel),
                                 Int32(min(max(compressionLevel, 0), 9)), icc, iccSize, &output, &size, &message)
            }
        }
        guard ok != 0, let output else {
            throw CodecError.encodingFailed(format: .png, reason: cMessage(message))
        }
        defer { easel_png_free(output) }
        return Data(bytes: output, count: size)
    }

    private static func call(_ data: Data, _ body: (UnsafePointer<UInt8>, Int, UnsafeMutablePointer<CChar>) -> Int32) throws {
        _ = try callShim(data, format: .png, messageSize: EASEL_PNG_MESSAGE_SIZE, body)
    }
}
