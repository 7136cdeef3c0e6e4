import EaselSupport
import Foundation

/// The largest image a step that grows its input may make (an enlargement to a minimum size, a
/// covering fit, a zoom, a border, a frame): past it the step refuses rather than allocate.
public struct OutputLimit: Sendable, Hashable {
    /// The longest side.
    public var side: Int
    /// The most pixels in all.
    public var pixels: Int

    /// A limit of `side` pixels a side and `pixels` in all (16384 and 100 million by default).
    public init(side: Int = 16_384, pixels: Int = 100_000_000) {
        self.side = side
        self.pixels = pixels
    }

    /// Refuses a `width` × `height` result past the limit.
    func check(_ width: Int, _ height: Int, _ what: String) throws(CodecError) {
        guard width <= side, height <= side, (Int.checkedProduct(width, height) ?? .max) <= pixels else {
            throw .invalidParameters("\(what) would make \(width)×\(height) pixels, past the limit of \(side) a side and \(pixels) in all")
        }
    }
}

/// A turn by a multiple of 90° counter-clockwise (thumbor's `rotate(angle)`, as its PIL engine
/// turns: 90 is a quarter turn to the left).
public struct QuarterTurn: ImageProcessor, Hashable {
    /// Quarter turns counter-clockwise, 0…3.
    public let turns: Int

    /// A turn of `degrees` counter-clockwise.
    /// - Throws: `CodecError.invalidParameters` for an angle that is not a multiple of 90.
    public init(degrees: Int) throws {
        guard degrees % 90 == 0 else { throw CodecError.invalidParameters("rotate takes a multiple of 90 degrees") }
        turns = ((degrees / 90) % 4 + 4) % 4
    }

    /// `rotate(degrees)`.
    public var identifier: String { "rotate(\(turns * 90))" }

    /// The turned bitmap (EXIF's orientations 8, 3 and 6 are these turns).
    public func process(_ bitmap: Bitmap) throws -> Bitmap {
        switch turns {
        case 1: Orientation.apply(8, to: bitmap)
        case 2: Orientation.apply(3, to: bitmap)
        case 3: Orientation.apply(6, to: bitmap)
        default: bitmap
        }
    }
}

/// A resize by factors of the bitmap's own size, across and down (thumbor's `proportion(factor)`,
/// imgproxy's `zoom` without a size), with Lanczos-3; each side at least 1 pixel.
public struct Scale: ImageProcessor, Hashable {
    /// Above 0, at most `maximumFactor`.
    public let factorX: Double, factorY: Double

    /// The largest factor.
    public static let maximumFactor = 8.0

    /// A scale by `factor` on both sides.
    /// - Throws: `CodecError.invalidParameters` outside (0, `maximumFactor`].
    public init(factor: Double) throws { try self.init(x: factor, y: factor) }

    /// The largest result.
    public var limit = OutputLimit()
    /// Sides rounded down (thumbor's `proportion`, whose PIL engine truncates) instead of to the
    /// nearest pixel.
    public var roundsDown = false

    /// A scale by `x` across and `y` down, its result within `limit`.
    /// - Throws: `CodecError.invalidParameters` outside (0, `maximumFactor`].
    public init(x: Double, y: Double, limit: OutputLimit = OutputLimit()) throws {
        guard x.isFinite, y.isFinite, x > 0, y > 0, x <= Self.maximumFactor, y <= Self.maximumFactor else {
            throw CodecError.invalidParameters("a scale factor is above 0 and at most \(Self.maximumFactor)")
        }
        (factorX, factorY) = (x, y)
        self.limit = limit
    }

    /// The factor on both sides (`factorX`).
    public var factor: Double { factorX }

    /// `scale(x,y)`.
    public var identifier: String { "scale(\(factorX),\(factorY)" + (roundsDown ? ",down)" : ")") }

    /// The size of a `width` × `height` bitmap once scaled.
    public func size(width: Int, height: Int) -> (width: Int, height: Int) {
        let rule: FloatingPointRoundingRule = roundsDown ? .down : .toNearestOrAwayFromZero
        return (max(1, Int(checked: (Double(width) * factorX).rounded(rule))), max(1, Int(checked: (Double(height) * factorY).rounded(rule))))
    }

    /// The bitmap at the factors times its size.
    /// - Throws: `CodecError.invalidParameters` for a result past `limit`.
    public func process(_ bitmap: Bitmap) throws -> Bitmap {
        let (width, height) = size(width: bitmap.width, height: bitmap.height)
        guard width != bitmap.width || height != bitmap.height else { return bitmap }
        try limit.check(width, height, "the scale")
        return try Resize(width: width, height: height, mode: .exact, upscale: true).process(bitmap)
    }
}

/// A border of `top`, `right`, `bottom` and `left` pixels around the bitmap in one colour
/// (imgproxy's `padding`); straight alpha.
public struct Border: ImageProcessor, Hashable {
    /// The border's widths in pixels, 0…`maximumWidth` each.
    public let top: Int, right: Int, bottom: Int, left: Int
    /// The border's colour, straight alpha.
    public let red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8

    /// The widest border side.
    public static let maximumWidth = 8192
    /// The largest result.
    public var limit = OutputLimit()

    /// A border of these widths and colour (opaque white by default).
    /// - Throws: `CodecError.invalidParameters` for a width outside 0…`maximumWidth`.
    public init(top: Int, right: Int, bottom: Int, left: Int, red: UInt8 = 255, green: UInt8 = 255, blue: UInt8 = 255, alpha: UInt8 = 255) throws {
        guard [top, right, bottom, left].allSatisfy({ (0...Self.maximumWidth).contains($0) }) else {
            throw CodecError.invalidParameters("padding is 0–\(Self.maximumWidth) pixels a side")
        }
        (self.top, self.right, self.bottom, self.left) = (top, right, bottom, left)
        (self.red, self.green, self.blue, self.alpha) = (red, green, blue, alpha)
    }

    /// `border(t,r,b,l,r,g,b,a)`.
    public var identifier: String { "border(\(top),\(right),\(bottom),\(left),\(red),\(green),\(blue),\(alpha))" }

    /// The bitmap on a canvas larger by the border, in the border's colour.
    /// - Throws: `CodecError.invalidParameters` for a canvas past `limit`.
    public func process(_ bitmap: Bitmap) throws -> Bitmap {
        guard top + right + bottom + left > 0 else { return bitmap }
        try limit.check(bitmap.width + left + right, bitmap.height + top + bottom, "the padding")
        // The image's top-left corner exactly at (left, top).
        return try Pad(width: bitmap.width + left + right, height: bitmap.height + top + bottom, red: red, green: green, blue: blue,
                       alpha: alpha, gravity: .offset(.northWest, x: Double(left), y: Double(top))).process(bitmap)
    }
}

/// Blocks of `size` × `size` pixels, each its mean colour and alpha (imgproxy's `pixelate`); the
/// last blocks of a row or column are smaller. Cost: two passes over the pixels at any size.
public struct Pixelate: ImageProcessor, Hashable {
    /// The side of a block, 1…`maximumSize` (1: no change).
    public let size: Int

    /// The largest block.
    public static let maximumSize = 4096

    /// Pixelation into blocks of `size`.
    /// - Throws: `CodecError.invalidParameters` outside 1…`maximumSize`.
    public init(size: Int) throws {
        guard (1...Self.maximumSize).contains(size) else { throw CodecError.invalidParameters("pixelate is 1–\(Self.maximumSize)") }
        self.size = size
    }

    /// `pixelate(size)`.
    public var identifier: String { "pixelate(\(size))" }

    /// The pixelated bitmap.
    public func process(_ bitmap: Bitmap) throws -> Bitmap {
        guard size > 1 else { return bitmap }
        let step = bitmap.pixelFormat.bytesPerPixel, rowBytes = bitmap.rowBytes
        let opaque = bitmap.isKnownOpaque
        var result = bitmap
        try result.withUnsafeMutableBytes { bytes in
            for blockY in stride(from: 0, to: bitmap.height, by: size) {
                if WorkCancellation.isCancelled { throw CodecError.cancelled }
                let rows = min(size, bitmap.height - blockY)
                for blockX in stride(from: 0, to: bitmap.width, by: size) {
                    let columns = min(size, bitmap.width - blockX)
                    var sums = [Int](repeating: 0, count: step)
                    for y in blockY..<(blockY + rows) {
                        for x in blockX..<(blockX + columns) { for c in 0..<step { sums[c] += Int(bytes[y * rowBytes + x * step + c]) } }
                    }
                    let count = rows * columns
                    let mean = sums.map { UInt8(($0 + count / 2) / count) }
                    for y in blockY..<(blockY + rows) {
                        for x in blockX..<(blockX + columns) { for c in 0..<step { bytes[y * rowBytes + x * step + c] = mean[c] } }
                    }
                }
            }
        }
        if opaque { result.markOpaque() }
        return result
    }
}

/// At least `width` × `height`, the aspect ratio kept (imgproxy's `min-width` and `min-height`):
/// a bitmap smaller on either side is enlarged until both are met (0: no minimum on that side).
public struct MinimumSize: ImageProcessor, Hashable {
    /// The minimum sides, 0 for none.
    public let width: Int, height: Int

    /// The largest result.
    public var limit = OutputLimit()

    /// Minimum sides (0: none), the result within `limit`.
    public init(width: Int, height: Int, limit: OutputLimit = OutputLimit()) {
        self.width = min(limit.side, max(0, width))
        self.height = min(limit.side, max(0, height))
        self.limit = limit
    }

    /// `min-size(WxH)`.
    public var identifier: String { "min-size(\(width)x\(height))" }

    /// The bitmap, enlarged when a side is below its minimum.
    /// - Throws: `CodecError.invalidParameters` for a result past `limit`.
    public func process(_ bitmap: Bitmap) throws -> Bitmap {
        let factor = max(Double(width) / Double(bitmap.width), Double(height) / Double(bitmap.height))
        guard factor > 1 else { return bitmap }
        let w = max(width, Int(checked: (Double(bitmap.width) * factor).rounded()))
        let h = max(height, Int(checked: (Double(bitmap.height) * factor).rounded()))
        try limit.check(w, h, "the minimum size")
        return try Resize(width: w, height: h, mode: .exact, upscale: true).process(bitmap)
    }
}

/// An extension of the image to an aspect ratio (imgproxy's `extend_aspect_ratio`): the smallest
/// canvas with the ratio of `pad`'s size that holds the image, only ever wider or taller, in
/// `pad`'s colour, the image placed by `pad`'s gravity. An image already at the ratio is left
/// as it is.
public struct AspectExtend: ImageProcessor, Hashable {
    /// The ratio (its `width` : `height`), the colour and the gravity; its size is not the
    /// canvas's.
    public var pad: Pad
    /// The largest canvas allowed.
    public var limit: OutputLimit

    /// An extension to the ratio of `pad`'s size, within `limit`.
    public init(_ pad: Pad, limit: OutputLimit = OutputLimit()) {
        self.pad = pad
        self.limit = limit
    }

    /// `aspect(` `pad`'s identifier `)`.
    public var identifier: String { "aspect(\(pad.identifier))" }

    /// The canvas for a `width × height` image: one side kept, the other grown to the ratio
    /// (rounded to the nearest pixel, as imgproxy rounds it).
    public func canvas(width: Int, height: Int) -> (width: Int, height: Int) {
        // Compared in integers: width : height against the ratio, exactly.
        let wide = width * pad.height, tall = height * pad.width
        if wide > tall {
            return (width, max(height, Int(checked: (Double(width) * Double(pad.height) / Double(pad.width)).rounded())))
        } else if tall > wide {
            return (max(width, Int(checked: (Double(height) * Double(pad.width) / Double(pad.height)).rounded())), height)
        }
        return (width, height)
    }

    /// `bitmap` on the canvas, or itself at the ratio.
    /// - Throws: `CodecError.invalidParameters` for a canvas past `limit`.
    public func process(_ bitmap: Bitmap) throws -> Bitmap {
        let size = canvas(width: bitmap.width, height: bitmap.height)
        guard size != (bitmap.width, bitmap.height) else { return bitmap }
        try limit.check(size.width, size.height, "extend_aspect_ratio")
        var pad = self.pad
        pad.width = size.width
        pad.height = size.height
        return try pad.process(bitmap)
    }
}
