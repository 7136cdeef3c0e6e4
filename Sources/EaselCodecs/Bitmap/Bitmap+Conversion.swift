extension Bitmap {
    /// This bitmap in another pixel format: RGBA to gray by Rec. 601 luma (alpha dropped), gray
    /// to opaque RGBA.
    public func converted(to format: PixelFormat) -> Bitmap {
        guard format != pixelFormat else { return self }
        var result = Bitmap(width: width, height: height, pixelFormat: format)
        let sourceRowBytes = rowBytes, targetRowBytes = result.rowBytes, width = self.width, height = self.height
        withUnsafeBytes { source in
            result.withUnsafeMutableBytes { target in
                for y in 0..<height {
                    for x in 0..<width {
                        if format == .gray8 {
                            let o = y * sourceRowBytes + x * 4
                            let luma = (Int(source[o]) * 299 + Int(source[o + 1]) * 587 + Int(source[o + 2]) * 114 + 500) / 1000
                            target[y * targetRowBytes + x] = UInt8(luma)
                        } else {
                            let value = source[y * sourceRowBytes + x]
                            let o = y * targetRowBytes + x * 4
                            target[o] = value; target[o + 1] = value; target[o + 2] = value; target[o + 3] = 255
                        }
                    }
                }
            }
        }
        if format == .rgba8 { result.markOpaque() }
        return result
    }
}

extension Bitmap {
    /// Whether any pixel's alpha is below 255 (false at once for a bitmap known to be opaque):
    /// encoders that can leave alpha out ask it.
    public var hasTransparentPixels: Bool {
        guard !isKnownOpaque, pixelFormat == .rgba8 else { return false }
        return withUnsafeBytes { pixels in
            (0..<height).contains { y in (0..<width).contains { pixels[y * rowBytes + $0 * 4 + 3] != 255 } }
        }
    }
}
