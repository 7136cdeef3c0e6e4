import EaselCodecs

/// A bitmap filled by a function of (x, y) giving RGBA (the bytes given; fewer than four leave
/// the rest 0).
public func painted(width: Int, height: Int, _ color: (Int, Int) -> [UInt8]) -> Bitmap {
    var bitmap = Bitmap(width: width, height: height, pixelFormat: .rgba8)
    let rowBytes = bitmap.rowBytes
    bitmap.withUnsafeMutableBytes { bytes in
        for y in 0..<height { for x in 0..<width {
            for (c, value) in color(x, y).enumerated() { bytes[y * rowBytes + x * 4 + c] = value }
        } }
    }
    return bitmap
}

/// The same with RGB colours: opaque unless a fourth value (alpha) is given.
public func paintedOpaque(width: Int, height: Int, _ color: (Int, Int) -> [UInt8]) -> Bitmap {
    painted(width: width, height: height) { x, y in
        let value = color(x, y)
        return value.count >= 4 ? value : value + [255]
    }
}
