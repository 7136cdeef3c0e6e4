import EaselCodecs
import Foundation

/// A `width × height` opaque picture: gradients across and down, and soft blobs (a period of a
/// twentieth of the width, so detail survives a 1/8 shrink without aliasing), filled row by
/// row without a closure per pixel, so that photo-sized sources (24 MP) are quick to make at
/// test time.
public func photoLike(width: Int, height: Int) -> Bitmap {
    var bitmap = Bitmap(width: width, height: height, pixelFormat: .rgba8)
    let rowBytes = bitmap.rowBytes, period = max(2, width / 20)
    // A smooth bump per period, 0–100.
    let blobs = (0..<period).map { UInt8(50 - 50 * cos(2 * Double.pi * Double($0) / Double(period))) }
    bitmap.withUnsafeMutableBytes { bytes in
        for y in 0..<height {
            let row = y * rowBytes, green = UInt8(truncatingIfNeeded: y * 255 / max(1, height - 1))
            for x in 0..<width {
                let at = row + x * 4
                bytes[at] = UInt8(truncatingIfNeeded: x * 255 / max(1, width - 1))
                bytes[at + 1] = green
                bytes[at + 2] = blobs[x % period] &+ blobs[y % period]
                bytes[at + 3] = 255
            }
        }
    }
    return bitmap
}

/// The mean absolute difference per channel (RGB) of two bitmaps of one size; nil when their
/// sizes differ.
public func meanDifference(_ a: Bitmap, _ b: Bitmap) -> Double? {
    guard a.width == b.width, a.height == b.height else { return nil }
    var total = 0
    for y in 0..<a.height {
        for x in 0..<a.width {
            let p = a.pixel(x: x, y: y), q = b.pixel(x: x, y: y)
            for c in 0..<3 { total += abs(Int(p[c]) - Int(q[c])) }
        }
    }
    return Double(total) / Double(a.width * a.height * 3)
}
