import EaselCodecs
import Foundation

/// The one "decode once, make every format of the family" routine (the pipeline's processing
/// and the image table cache both use it): the header is read, the image decoded once at the
/// smallest scale that still covers every target (JPEG's DCT scaling, shrink-on-load), and each
/// target made from that one bitmap.
package struct FamilyDecode {
    package let info: ImageInfo
    package let decoded: Bitmap

    /// - Parameters:
    ///   - targets: the formats to make; the decode covers the largest source size any needs.
    ///   - info: the header, when the caller has read it already (with the same limits).
    ///   - covering: without targets, the source size to cover, from the header (nil: full size).
    package init(_ data: Data, info known: ImageInfo? = nil, targets: [ImageFormat], limits: DecodingLimits,
                 covering: ((ImageInfo) -> (width: Int, height: Int)?)? = nil) throws(CodecError) {
        do {
            let info = try known ?? ImageDecoder.info(of: data, limits: limits)
            let needed: (width: Int, height: Int)?
            if targets.isEmpty {
                needed = covering?(info)
            } else {
                needed = targets.reduce((width: 1, height: 1)) { needed, target in
                    let size = target.minimumSourceSize(of: info)
                    return (max(needed.width, size.width), max(needed.height, size.height))
                }
            }
            self.info = info
            decoded = try ImageDecoder.decode(data, info: info, covering: needed, limits: limits)
        } catch let error as CodecError {
            throw error
        } catch {
            throw .invalidParameters("\(error)")
        }
    }

    /// Each target, made from one decoded image by `make` (the format's processing, or a custom
    /// drawing step), with its own result.
    package static func make<Failure: Error>(_ targets: [ImageFormat], from decoded: Bitmap,
                                             _ make: (ImageFormat, Bitmap) throws(Failure) -> Bitmap) -> [String: Result<Bitmap, Failure>] {
        var results: [String: Result<Bitmap, Failure>] = [:]
        for target in targets {
            results[target.name] = Result { () throws(Failure) -> Bitmap in try make(target, decoded) }
        }
        return results
    }
}
