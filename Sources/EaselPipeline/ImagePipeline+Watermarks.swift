import Crypto
import EaselCodecs
import EaselSupport
import Foundation

/// A watermark image ready to composite: RGBA, with an identity for the keys of what is made
/// with it.
public struct PreparedWatermark: Sendable {
    /// The mark in RGBA (8 bits a channel).
    public let image: Bitmap
    /// The first 128 bits of the SHA-256 of its size and pixels (rows without their padding), in
    /// hex: a new image under the same source is a new identity, and no crafted image can take
    /// another's (a cryptographic hash), so no two marks share a cache key.
    public let identifier: String
    /// The source key of the mark's image (what a purge of it names).
    public let sourceKey: String
    /// Its source's purge mark when its preparation began: what is made with it is not kept
    /// past a purge of that source which began since (see `PurgeMarks`).
    let mark: PurgeMarks.Mark
}

/// Prepared watermarks by source key, bounded in bytes (marks are at most 16 MiB each); emptied
/// of a source by its purge.
typealias PreparedWatermarks = ByteBoundedMemo<PreparedWatermark>

extension ByteBoundedMemo where Value == PreparedWatermark {
    /// A memo of 64 MiB of marks.
    convenience init() { self.init(byteLimit: 64 << 20) { $0.image.rowBytes * $0.image.height } }
}

extension ImagePipeline {
    /// The watermark image of `request`'s source, prepared once (until that source is purged):
    /// read through the tiers like any source — within `request`'s deadline and limits, under
    /// `admission` like any other work — at most `maxSide` pixels a side (`.decoding(.sideTooLong)`
    /// otherwise, from the header before any decode), converted to RGBA and identified by its
    /// pixels. A warm call is one lookup. A preparation that raced a purge of the source is
    /// answered but not kept (it may be the purged image).
    public func watermark(for request: ImageRequest, maxSide: Int,
                          admission: (any WorkAdmission)? = nil) async throws(PipelineError) -> PreparedWatermark {
        guard let sourceKey = request.sourceKey else { throw .noSource }
        // A prepared mark whose purge mark is no longer current (its source's purge under way, or
        // a purge of another source in the same slot) is prepared again, under a current mark:
        // what is made with it could not be kept otherwise.
        if let prepared = watermarks.value(forKey: sourceKey), purges.isCurrent(prepared.mark) {
            let image = prepared.image
            guard image.width <= maxSide, image.height <= maxSide else {
                throw .decoding(.sideTooLong(width: image.width, height: image.height, limit: maxSide))
            }
            return prepared
        }
        let mark = purges.mark(sourceKey)
        var request = request
        request.sourceLimits = DecodingLimits(maxSide: maxSide)
        if let admission, !admission.enter() { throw .overloaded }
        defer { admission?.leave() }
        let bitmap = try await image(for: request).image
        // A bitmap the memory tier already held was never checked against the side limit.
        guard bitmap.width <= maxSide, bitmap.height <= maxSide else {
            throw .decoding(.sideTooLong(width: bitmap.width, height: bitmap.height, limit: maxSide))
        }
        let prepared = try await BlockingIOPool.decoding.performCancellable { () throws(PipelineError) -> PreparedWatermark in
            Self.prepare(bitmap, sourceKey: sourceKey, mark: mark)
        }
        if purges.isCurrent(mark) {
            watermarks.keep(prepared, forKey: sourceKey)
            // A purge that began meanwhile takes it back.
            if !purges.isCurrent(mark) { watermarks.remove(sourceKey) }
        }
        return prepared
    }

    /// The mark in RGBA and its identity.
    static func prepare(_ bitmap: Bitmap, sourceKey: String, mark: PurgeMarks.Mark) -> PreparedWatermark {
        let rgba = bitmap.converted(to: .rgba8)
        var hasher = SHA256()
        withUnsafeBytes(of: (UInt64(rgba.width).littleEndian, UInt64(rgba.height).littleEndian)) { hasher.update(bufferPointer: $0) }
        rgba.withUnsafeBytes { bytes in
            for y in 0..<rgba.height {
                hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: bytes[y * rgba.rowBytes..<y * rgba.rowBytes + rgba.width * 4]))
            }
        }
        let identifier = hasher.finalize().prefix(16).map { String(format: "%02x", $0) }.joined()
        return PreparedWatermark(image: rgba, identifier: identifier, sourceKey: sourceKey, mark: mark)
    }
}
