/// One step that turns a bitmap into another; processors compose into pipelines.
///
/// `identifier` is stable across runs and versions for the same parameters, so it can be part
/// of a cache key: two pipelines with equal identifiers make equal pixels.
public protocol ImageProcessor: Sendable {
    var identifier: String { get }
    func process(_ bitmap: Bitmap) throws -> Bitmap
}

extension Array where Element == any ImageProcessor {
    /// The identifiers of all steps, in order: a cache key for the whole chain.
    public var identifier: String { map(\.identifier).joined(separator: "|") }

    /// Runs every step in order.
    public func process(_ bitmap: Bitmap) throws -> Bitmap {
        try reduce(bitmap) { try $1.process($0) }
    }
}

/// How a resize treats the target box.
public enum ResizeMode: String, Sendable, Hashable, CaseIterable {
    /// Scale to fit inside the box, keeping the aspect ratio (one side may be smaller).
    case fit
    /// Scale to cover the box, keeping the aspect ratio, then crop the centre to the box.
    case fill
    /// Scale to exactly the box, ignoring the aspect ratio.
    case exact
}

/// Resizes with Lanczos-3.
public struct Resize: ImageProcessor, Hashable {
    public var width: Int
    public var height: Int
    public var mode: ResizeMode
    /// When false (default), a source smaller than the box is left at its size by `fit`.
    public var upscale: Bool

    public init(width: Int, height: Int, mode: ResizeMode = .fit, upscale: Bool = false) {
        precondition(width > 0 && height > 0, "a resize needs a positive size")
        self.width = width
        self.height = height
        self.mode = mode
        self.upscale = upscale
    }

    public var identifier: String { "resize(\(width)x\(height),\(mode.rawValue)\(upscale ? ",up" : ""))" }

    /// The size `fit` and `fill` scale a `sourceWidth × sourceHeight` image to before any crop.
    public func scaledSize(sourceWidth: Int, sourceHeight: Int) -> (width: Int, height: Int) {
        switch mode {
        case .exact:
            return (width, height)
        case .fit:
            let scale = min(Double(width) / Double(sourceWidth), Double(height) / Double(sourceHeight))
            if scale >= 1, !upscale { return (sourceWidth, sourceHeight) }
            return (max(1, Int((Double(sourceWidth) * scale).rounded())), max(1, Int((Double(sourceHeight) * scale).rounded())))
        case .fill:
            let scale = max(Double(width) / Double(sourceWidth), Double(height) / Double(sourceHeight))
            return (max(width, Int((Double(sourceWidth) * scale).rounded())), max(height, Int((Double(sourceHeight) * scale).rounded())))
        }
    }

    /// The smallest decoded size that still makes this resize exact (for shrink-on-load).
    public func minimumSourceSize(sourceWidth: Int, sourceHeight: Int) -> (width: Int, height: Int) {
        scaledSize(sourceWidth: sourceWidth, sourceHeight: sourceHeight)
    }

    public func process(_ bitmap: Bitmap) throws -> Bitmap {
        guard mode == .fill else {
            let size = scaledSize(sourceWidth: bitmap.width, sourceHeight: bitmap.height)
            return Resampler.resize(bitmap, width: size.width, height: size.height)
        }
        // Crop the source to the box's aspect ratio first, then resize to exactly the box: the
        // same pixels as scaling to cover and cropping the centre, without ever building the
        // (possibly enormous, for extreme aspect ratios) covering image.
        let scale = max(Double(width) / Double(bitmap.width), Double(height) / Double(bitmap.height))
        let cropWidth = min(bitmap.width, max(1, Int((Double(width) / scale).rounded())))
        let cropHeight = min(bitmap.height, max(1, Int((Double(height) / scale).rounded())))
        let cropped = cropWidth == bitmap.width && cropHeight == bitmap.height ? bitmap
            : try Crop(x: (bitmap.width - cropWidth) / 2, y: (bitmap.height - cropHeight) / 2,
                       width: cropWidth, height: cropHeight).process(bitmap)
        return Resampler.resize(cropped, width: width, height: height)
    }
}

/// Cuts out a rectangle.
public struct Crop: ImageProcessor, Hashable {
    public var x: Int, y: Int, width: Int, height: Int

    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public var identifier: String { "crop(\(x),\(y),\(width)x\(height))" }

    /// - Throws: `CodecError.invalidParameters` when the rectangle is not inside the bitmap.
    public func process(_ bitmap: Bitmap) throws -> Bitmap {
        guard x >= 0, y >= 0, width > 0, height > 0, x <= bitmap.width - width, y <= bitmap.height - height else {
            throw CodecError.invalidParameters("crop \(x),\(y) \(width)x\(height) outside a \(bitmap.width)x\(bitmap.height) image")
        }
        var result = Bitmap(width: width, height: height, pixelFormat: bitmap.pixelFormat)
        let bpp = bitmap.pixelFormat.bytesPerPixel, rowBytes = result.rowBytes
        bitmap.withUnsafeBytes { source in
            result.withUnsafeMutableBytes { destination in
                for row in 0..<height {
                    (destination.baseAddress! + row * rowBytes).copyMemory(
                        from: source.baseAddress! + (y + row) * bitmap.rowBytes + x * bpp, byteCount: width * bpp)
                }
            }
        }
        if bitmap.isKnownOpaque { result.markOpaque() }
        return result
    }
}

/// Luminance only (Rec. 601 weights); RGBA stays RGBA with equal channels, alpha kept.
public struct Grayscale: ImageProcessor, Hashable {
    public init() {}
    public var identifier: String { "grayscale" }

    public func process(_ bitmap: Bitmap) throws -> Bitmap {
        guard bitmap.pixelFormat == .rgba8 else { return bitmap }
        var result = bitmap
        let opaque = bitmap.isKnownOpaque
        let rowBytes = result.rowBytes, width = result.width, height = result.height
        result.withUnsafeMutableBytes { bytes in
            for y in 0..<height {
                for x in 0..<width {
                    let o = y * rowBytes + x * 4
                    let luma = (Int(bytes[o]) * 299 + Int(bytes[o + 1]) * 587 + Int(bytes[o + 2]) * 114 + 500) / 1000
                    bytes[o] = UInt8(luma); bytes[o + 1] = UInt8(luma); bytes[o + 2] = UInt8(luma)
                }
            }
        }
        if opaque { result.markOpaque() }
        return result
    }
}

/// Composites RGBA onto an opaque background colour (before encoding JPEG, which has no alpha).
public struct Flatten: ImageProcessor, Hashable {
    public var red: UInt8, green: UInt8, blue: UInt8

    public init(red: UInt8 = 255, green: UInt8 = 255, blue: UInt8 = 255) {
        self.red = red
        self.green = green
        self.blue = blue
    }

    public var identifier: String { "flatten(\(red),\(green),\(blue))" }

    public func process(_ bitmap: Bitmap) throws -> Bitmap {
        guard bitmap.pixelFormat == .rgba8 else { return bitmap }
        var result = bitmap
        let rowBytes = result.rowBytes, width = result.width, height = result.height
        let background = [Int(red), Int(green), Int(blue)]
        result.withUnsafeMutableBytes { bytes in
            for y in 0..<height {
                for x in 0..<width {
                    let o = y * rowBytes + x * 4
                    let alpha = Int(bytes[o + 3])
                    for c in 0..<3 {
                        bytes[o + c] = UInt8((Int(bytes[o + c]) * alpha + background[c] * (255 - alpha) + 127) / 255)
                    }
                    bytes[o + 3] = 255
                }
            }
        }
        result.markOpaque()
        return result
    }
}
