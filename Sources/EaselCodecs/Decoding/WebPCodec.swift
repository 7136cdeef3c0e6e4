import CInput
import CWebP
import EaselSupport
import Foundation

/// WebP through libwebp: lossy, lossless, with alpha; of an animation, the first frame placed
/// on its canvas.
enum WebPCodec {
    static func info(_ data: Data, limits: DecodingLimits = .default) throws -> ImageInfo {
        var features = WebPBitstreamFeatures()
        let status = data.withUnsafeBytes { raw in
            WebPGetFeatures(raw.baseAddress?.assumingMemoryBound(to: UInt8.self), raw.count, &features)
        }
        guard status == VP8_STATUS_OK else { throw CodecError.corrupt(format: .webp, reason: "unreadable header (status \(status.rawValue))") }
        // Only a lossy (VP8) image without an alpha chunk is certainly opaque: for lossless
        // data the header's alpha flag is a hint, and libwebp decodes whatever alpha is there.
        var frames = 1
        if features.has_animation != 0 {
            // The frame count from the container (no frame decoded).
            frames = data.withUnsafeBytes { raw -> Int in
                var webp = WebPData(bytes: raw.baseAddress?.assumingMemoryBound(to: UInt8.self), size: raw.count)
                guard let demux = WebPDemux(&webp) else { return 1 }
                defer { WebPDemuxDelete(demux) }
                return Int(WebPDemuxGetI(demux, WEBP_FF_FRAME_COUNT))
            }
        }
        var info = ImageInfo(fileType: .webp, width: Int(features.width), height: Int(features.height), hasAlpha: features.has_alpha != 0 || features.format != 1, isGrayscale: false, isProgressive: false, isAnimated: features.has_animation != 0)
        info.exif = ExifReader.read(webp: data)
        info.colorProfile = ICCProfileReader.read(webp: data, limit: limits.maxProfileBytes)
        info.frameCount = max(1, frames)
        // What libwebp holds at any scale: a lossless image's whole ARGB (its backward references
        // reach anywhere above), a lossy one's whole alpha plane.
        let pixels = Int.checkedProduct(info.width, info.height) ?? Int.max / 8
        if features.format == 2 {
            info.decoderWorkingBytes = Int.checkedProduct(pixels, 4) ?? Int.max / 8
        } else if features.has_alpha != 0 {
            info.decoderWorkingBytes = pixels
        }
        return info
    }

    /// Whether a decode of this image may shrink on load: a still (an animation's frames are
    /// placed on their canvas at full size).
    static func scales(_ info: ImageInfo) -> Bool { info.fileType == .webp && !info.isAnimated && info.page == 0 }

    /// The image, or with `minimumSize` (stored orientation) a still shrunk on load by the largest
    /// of 1/2, 1/4 and 1/8 that still covers it (as JPEG's DCT scaling; libwebp's rescaler
    /// averages the area each output pixel covers), never the full-size bitmap.
    static func decode(_ data: Data, info: ImageInfo, covering minimumSize: (width: Int, height: Int)? = nil,
                       pixelFormat: Bitmap.PixelFormat) throws -> Bitmap {
        let denominator = scales(info) ? JPEGCodec.scaleDenominator(width: info.width, height: info.height, covering: minimumSize) : 1
        let width = (info.width + denominator - 1) / denominator, height = (info.height + denominator - 1) / denominator
        var bitmap = Bitmap(width: width, height: height, pixelFormat: .rgba8)
        let rowBytes = bitmap.rowBytes
        let ok = try data.withUnsafeBytes { raw -> Bool in
            guard let base = raw.baseAddress, raw.count > 0 else { return false }
            let input = base.assumingMemoryBound(to: UInt8.self)
            if denominator > 1 {
                return bitmap.withUnsafeMutableBytes { pixels in
                    decodeScaled(input, count: raw.count, into: pixels, rowBytes: rowBytes, width: width, height: height)
                }
            }
            if !info.isAnimated {
                return bitmap.withUnsafeMutableBytes { pixels in
                    WebPDecodeRGBAInto(input, raw.count, pixels.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                       pixels.count, Int32(rowBytes)) != nil
                }
            }
            var webpData = WebPData(bytes: input, size: raw.count)
            guard let demux = WebPDemux(&webpData) else { return false }
            defer { WebPDemuxDelete(demux) }
            var frame = WebPIterator()
            guard WebPDemuxGetFrame(demux, 1, &frame) != 0 else { return false }
            defer { WebPDemuxReleaseIterator(&frame) }
            let frameWidth = Int(frame.width), frameHeight = Int(frame.height)
            let x0 = Int(frame.x_offset), y0 = Int(frame.y_offset)
            guard frameWidth > 0, frameHeight > 0, x0 + frameWidth <= info.width, y0 + frameHeight <= info.height else {
                throw CodecError.corrupt(format: .webp, reason: "first frame outside its canvas")
            }
            var decoded = Bitmap(width: frameWidth, height: frameHeight, pixelFormat: .rgba8)
            let frameRowBytes = decoded.rowBytes
            let done = decoded.withUnsafeMutableBytes { pixels in
                WebPDecodeRGBAInto(frame.fragment.bytes, frame.fragment.size, pixels.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                   pixels.count, Int32(frameRowBytes)) != nil
            }
            guard done else { return false }
            decoded.withUnsafeBytes { source in
                bitmap.withUnsafeMutableBytes { canvas in
                    for y in 0..<frameHeight {
                        (canvas.baseAddress! + (y0 + y) * rowBytes + x0 * 4).copyMemory(
                            from: source.baseAddress! + y * frameRowBytes, byteCount: frameWidth * 4)
                    }
                }
            }
            return true
        }
        guard ok else { throw CodecError.corrupt(format: .webp, reason: "undecodable or truncated image data") }
        if !info.hasAlpha, !info.isAnimated { bitmap.markOpaque() }
        return bitmap.converted(to: pixelFormat)
    }

    /// libwebp's scaled decode of a still into `pixels` (RGBA, `width`×`height`, `rowBytes` a row).
    private static func decodeScaled(_ input: UnsafePointer<UInt8>, count: Int, into pixels: UnsafeMutableRawBufferPointer, rowBytes: Int,
                                     width: Int, height: Int) -> Bool {
        var config = WebPDecoderConfig()
        guard WebPInitDecoderConfig(&config) != 0 else { return false }
        config.options.use_scaling = 1
        config.options.scaled_width = Int32(width)
        config.options.scaled_height = Int32(height)
        config.output.colorspace = MODE_RGBA
        config.output.is_external_memory = 1
        config.output.u.RGBA.rgba = pixels.baseAddress!.assumingMemoryBound(to: UInt8.self)
        config.output.u.RGBA.stride = Int32(rowBytes)
        config.output.u.RGBA.size = pixels.count
        // A mapped input file (`InputFile`) is fed to libwebp's incremental decoder a megabyte at
        // a time, and what lies a megabyte behind what was fed is handed back to the kernel (a
        // read further back, of the first partition's modes or of the alpha, reads the file again):
        // the file is not kept resident. Memory as it is, decoded at once.
        if easel_input_is_mapped(input) != 0 {
            return withUnsafeMutablePointer(to: &config) { config in
                defer { WebPFreeDecBuffer(&config.pointee.output) }
                // (The decoder refers to `config` until it is deleted.)
                guard let decoder = WebPIDecode(input, count, config) else { return false }
                defer { WebPIDelete(decoder) }
                let step = 1 << 20
                var fed = 0, status = VP8_STATUS_SUSPENDED
                while status == VP8_STATUS_SUSPENDED, fed < count {
                    fed = min(count, fed + step)
                    status = WebPIUpdate(decoder, input, fed)
                    if fed > step { easel_input_release_behind(input + fed - step) }
                }
                return status == VP8_STATUS_OK
            }
        }
        let status = WebPDecode(input, count, &config)
        WebPFreeDecBuffer(&config.output)
        return status == VP8_STATUS_OK
    }

    static func encode(_ bitmap: Bitmap, quality: Int, lossless: Bool) throws -> Data {
        let rgba = bitmap.converted(to: .rgba8)
        var output: UnsafeMutablePointer<UInt8>?
        let size = rgba.withUnsafeBytes { pixels in
            let base = pixels.baseAddress!.assumingMemoryBound(to: UInt8.self)
            return lossless
                ? WebPEncodeLosslessRGBA(base, Int32(rgba.width), Int32(rgba.height), Int32(rgba.rowBytes), &output)
                : WebPEncodeRGBA(base, Int32(rgba.width), Int32(rgba.height), Int32(rgba.rowBytes), Float(min(max(quality, 0), 100)), &output)
        }
        guard size > 0, let output else { throw CodecError.encodingFailed(format: .webp, reason: "libwebp refused the image") }
        defer { WebPFree(output) }
        return Data(bytes: output, count: size)
    }
}
