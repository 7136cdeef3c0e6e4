import CGIF
import Foundation

/// GIF through giflib: the first frame, composed onto the logical screen, as RGBA.
enum GIFCodec {
    static func info(_ data: Data) throws -> ImageInfo {
        var width: Int32 = 0, height: Int32 = 0
        try call(data) { easel_gif_read_header($0, $1, &width, &height, $2) }
        return ImageInfo(fileType: .gif, width: Int(width), height: Int(height), hasAlpha: true, isGrayscale: false,
                         isProgressive: false)
    }

    static func decode(_ data: Data, info: ImageInfo, pixelFormat: Bitmap.PixelFormat, limits: DecodingLimits) throws -> Bitmap {
        var bitmap = Bitmap(width: info.width, height: info.height, pixelFormat: .rgba8)
        let rowBytes = bitmap.rowBytes
        try bitmap.withUnsafeMutableBytes { pixels in
            try call(data) { bytes, count, message in
                easel_gif_decode_first_frame(bytes, count, pixels.baseAddress!.assumingMemoryBound(to: UInt8.self), rowBytes,
                                             Int32(info.width), Int32(info.height), limits.maxPixels, message)
            }
        }
        return bitmap.converted(to: pixelFormat)
    }

    private static func call(_ data: Data, _ body: (UnsafePointer<UInt8>, Int, UnsafeMutablePointer<CChar>) -> Int32) throws {
        _ = try callShim(data, format: .gif, messageSize: EASEL_GIF_MESSAGE_SIZE, body)
    }
}
