/// Removes a uniform border: the largest frame of pixels within `tolerance` levels (on every
/// channel, alpha included) of the top-left pixel. An image that is all border is left as it is.
public struct Trim: ImageProcessor, Hashable {
    /// Largest per-channel difference from the top-left pixel that still counts as border,
    /// 0…255.
    public var tolerance: Int

    public init(tolerance: Int = 10) {
        precondition(tolerance >= 0 && tolerance <= 255, "trim tolerance must be in 0...255")
        self.tolerance = tolerance
    }

    /// The same, for a tolerance from user input.
    /// - Throws: `CodecError.invalidParameters` when it is outside 0…255.
    public static func validated(tolerance: Int = 10) throws(CodecError) -> Trim {
        guard tolerance >= 0, tolerance <= 255 else {
            throw CodecError.invalidParameters("trim tolerance \(tolerance) outside 0...255")
        }
        return Trim(tolerance: tolerance)
    }

    public var identifier: String { "trim(\(tolerance))" }

    /// The rectangle left after removing the border, or nil when the image is all border.
    public func contentBounds(of bitmap: Bitmap) -> (x: Int, y: Int, width: Int, height: Int)? {
        let width = bitmap.width, height = bitmap.height, rowBytes = bitmap.rowBytes
        let bpp = bitmap.pixelFormat.bytesPerPixel
        let tolerance = self.tolerance
        return bitmap.withUnsafeBytes { raw -> (x: Int, y: Int, width: Int, height: Int)? in
            let base = raw.baseAddress!
            let reference = (0..<bpp).map { Int(base.load(fromByteOffset: $0, as: UInt8.self)) }
            func isBorder(_ row: UnsafeRawPointer, _ x: Int) -> Bool {
                for c in 0..<bpp where abs(Int(row.load(fromByteOffset: x * bpp + c, as: UInt8.self)) - reference[c]) > tolerance {
                    return false
                }
                return true
            }
            func rowIsBorder(_ y: Int) -> Bool {
                let row = base + y * rowBytes
                for x in 0..<width where !isBorder(row, x) { return false }
                return true
            }
            guard let top = (0..<height).first(where: { !rowIsBorder($0) }) else { return nil }
            let bottom = (top..<height).last(where: { !rowIsBorder($0) }) ?? top
            var left = width, right = -1
            for y in top...bottom {
                let row = base + y * rowBytes
                // Only columns outside the content found so far can widen it.
                var x = 0
                while x < left, isBorder(row, x) { x += 1 }
                if x < left { left = x }
                var r = width - 1
                while r > right, isBorder(row, r) { r -= 1 }
                if r > right { right = r }
            }
            return (left, top, right - left + 1, bottom - top + 1)
        }
    }

    public func process(_ bitmap: Bitmap) throws -> Bitmap {
        guard let bounds = contentBounds(of: bitmap),
              bounds.width != bitmap.width || bounds.height != bitmap.height else { return bitmap }
        return try Crop(x: bounds.x, y: bounds.y, width: bounds.width, height: bounds.height).process(bitmap)
    }
}
