import EaselCodecs
import EaselSupport
import EaselTables
import Foundation

/// A decode's peak bytes, estimated from the source's header before anything is decoded: what
/// the memory budget (`ImagePipeline.Configuration.memoryBudget`) admits by.
///
/// The estimate counts what admission decides to allocate: the decoded bitmap at the scale the
/// request decodes at (shrink-on-load included: a PNG or a JPEG decoded at 1/8 counts 1/64 of
/// its pixels), as much again for processing (a resize reads one bitmap and writes a smaller
/// one; a crop or a turn copies), and the encoder's buffers (a quarter of the bitmap, at least
/// 1 MiB). An animation kept as one counts its canvas three times over (the frame read, the
/// frame processed, the encoder's). Vector sources count what they are drawn at. The source's
/// own bytes are not counted: they are read before (the fetch, bounded by the source byte
/// limit) and shared by every request of the source. A TIFF, BMP or GIF shrunk on load adds its
/// band of full-width rows (libtiff's strip or tile buffers, an interlaced GIF frame's indexes:
/// `ImageInfo.shrunkDecodeWorkingBytes`),
/// and a progressive JPEG libjpeg's coefficients of the whole image at any scale
/// (`ImageInfo.decoderWorkingBytes`).
public enum MemoryEstimate {
    /// The estimate for a source whose header is `info`, decoded at `decodedSize`.
    public static func peakBytes(info: ImageInfo, decodedSize: (width: Int, height: Int), animated: Bool) -> Int {
        if animated && info.isAnimated {
            let canvas = bytes(info.uprightWidth, info.uprightHeight)
            return (Int.checkedProduct(canvas, 3) ?? Int.max / 8) + (1 << 20)
        }
        // A TIFF, BMP or GIF shrunk on load also holds its band of full-width rows (and libtiff's
        // buffers, or an interlaced GIF frame's indexes); shrunk on either side (a one-row image
        // shrinks across only).
        let shrunk = decodedSize.width < info.uprightWidth || decodedSize.height < info.uprightHeight
        let band = shrunk ? info.shrunkDecodeWorkingBytes : 0
        return peakBytes(decoded: bytes(decodedSize.width, decodedSize.height)) + band + info.decoderWorkingBytes
    }

    /// The most any one decode under `maxPixels` can be estimated at: a progressive CMYK JPEG at
    /// full size is the largest (its bitmap twice, 8 bytes a pixel, the encoder's quarter, 1, and
    /// libjpeg's coefficients, 2 bytes a pixel for each of 4 components; an animation's canvas
    /// three times over is 12).
    public static func largestPeakBytes(maxPixels: Int) -> Int {
        (Int.checkedProduct(max(1, maxPixels), 17) ?? Int.max / 8) + (1 << 20)
    }

    /// The estimate for a still decoded at full size with `pixels` pixels.
    public static func peakBytes(pixels: Int) -> Int { peakBytes(decoded: Int.checkedProduct(max(1, pixels), 4) ?? Int.max / 8) }

    /// A still whose bitmap is `decoded` bytes: twice it, and the encoder's quarter (1 MiB at least).
    private static func peakBytes(decoded: Int) -> Int {
        let decoded = min(decoded, Int.max / 8)
        return decoded * 2 + max(1 << 20, decoded / 4)
    }

    /// The bytes of an RGBA bitmap of `width` × `height` (capped, never overflowing).
    private static func bytes(_ width: Int, _ height: Int) -> Int {
        Int.checkedProduct(max(1, width), max(1, height)).flatMap { Int.checkedProduct($0, 4) } ?? Int.max / 8
    }
}

extension ImagePipeline {
    /// The estimated peak bytes of decoding `data` for `request` (`MemoryEstimate`), its header
    /// read on the decode pool. A header that cannot be read counts nothing: the decode refuses
    /// it with its own error.
    func estimatedPeakBytes(_ data: Data, request: ImageRequest, format: ImageFormat?, animated: Bool) async -> Int {
        let limits = decodingLimits(for: request)
        let (page, thumbnail, video, autoRotate) = (request.page, request.embeddedThumbnail, request.video, request.autoRotate)
        let processing = request.processing
        let estimate = try? await BlockingIOPool.decoding.perform { () throws -> Int in
            // (A mapped file's pages read for the header are handed back: the request may wait
            // a while for its decode, which reads them again.)
            defer { InputFile.handBack(data) }
            let info = try ImageDecoder.info(of: data, limits: limits, page: page, embeddedThumbnail: thumbnail, video: video,
                                             autoRotate: autoRotate)
            let needed: (width: Int, height: Int)?
            if let format {
                needed = format.minimumSourceSize(of: info)
            } else if case .processors(let processors) = processing {
                needed = ReducedDecode.covering(processors, info: info)
            } else {
                needed = nil
            }
            let size = ImageDecoder.decodedSize(of: info, covering: needed)
            return MemoryEstimate.peakBytes(info: info, decodedSize: size, animated: animated)
        }
        return estimate ?? 0
    }
}
