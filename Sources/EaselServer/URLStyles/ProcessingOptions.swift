import EaselSupport
import EaselCodecs
import EaselPipeline
import Hummingbird

/// What an image URL asks for, whichever of the three URL styles (native, imgproxy, thumbor)
/// wrote it: one model, turned into one processor chain, so equal requests in any style share
/// one cache entry, one purge and one set of limits.
struct ProcessingOptions: Sendable {
    /// Requested size; 0 follows the other side (both 0: the source's size, within the limits).
    var width = 0
    var height = 0
    var mode: ResizeMode = .fit
    /// nil: the mode's default (`fill` and `exact` enlarge, the others do not).
    var enlarge: Bool?
    var gravity: Gravity = .center
    /// Multiplies the size (never past the source's size unless enlarging is allowed).
    var dpr: Double = 1
    /// The width and the DPR come from the client's Client Hints (native `w=auto`, `dpr=auto`;
    /// `ImageServer.applyHints`).
    var widthFromHints = false
    var dprFromHints = false
    /// Extends the result to the requested size with `background` (imgproxy `extend`, thumbor
    /// `fill` with `fit-in`).
    var extend = false
    /// Cut before the resize.
    var crop: RegionCrop.Region?
    /// Where a `crop` given as a size is placed (nil: `gravity`, resolved when the chain is made,
    /// so a later `g` applies as in imgproxy).
    var cropGravity: Gravity?
    /// Where `extend` places the image (nil: the centre).
    var extendGravity: Gravity?
    /// Extends the result to the requested size's aspect ratio, when both sides are asked for
    /// (imgproxy's `extend_aspect_ratio`), placed by `aspectExtendGravity` (nil: the centre), in
    /// `extend`'s colour.
    var aspectExtend = false
    var aspectExtendGravity: Gravity?
    /// The result at most this many pixels a side, everything that grows it included (imgproxy's
    /// `max_result_dimension`): made at a lower DPR where the box is known, else scaled down at
    /// the end (`processors`); nil: no such limit.
    var maxResultSide: Int?
    /// An image answered when the source is missing or cannot be decoded, made as the source
    /// would have been (imgproxy's `fallback_image_url`); nil: the server's.
    var fallback: ImageServer.Source?
    /// Tags added to the answer's cache tags (imgproxy's `cache_tags`), after the sources'.
    var cacheTags: [String] = []
    /// A uniform border removed first (thumbor `trim`, Euclidean tolerance 0–442).
    var trim: Trim?
    var flipHorizontal = false
    var flipVertical = false
    /// `rotation` and the flips apply to the source before any crop or resize, so that crops and
    /// gravities act on the turned image (imgproxy's order). Otherwise the flips come after the
    /// resize, before anything is added around the image (thumbor's).
    var turnsFirst = false
    var blur: Double?
    /// The blur kernel's radius in pixels (thumbor's `blur(radius, sigma)`); nil: 3 × sigma.
    var blurRadius: Int?
    /// Unsharp mask with this sigma (native `sharpen`, imgproxy `sh`).
    var sharpen: Double?
    /// thumbor's `sharpen(amount, radius, luminance_only)`: wavelet detail boost.
    var waveletSharpen: WaveletSharpen?
    var grayscale = false
    /// Rounded corners with these radii, across and down (thumbor `round_corner(a|b, …)`).
    var cornerRadii: (x: Double, y: Double)?
    /// The rounded corners' colour (nil: transparent corners).
    var cornerColour: (red: UInt8, green: UInt8, blue: UInt8)?
    /// Marks drawn over the result, in order (the last on top): images and text.
    var watermarks: [WatermarkOptions] = []
    /// Composited under transparent pixels (and the colour of `extend` unless `extendColour`
    /// names one).
    var background: (red: UInt8, green: UInt8, blue: UInt8)?
    /// The colour `extend` pads with (thumbor's `fill`), when it is not `background`.
    var extendColour: (red: UInt8, green: UInt8, blue: UInt8)?
    /// `extend` with a transparent canvas.
    var transparentExtend = false
    /// `extend` with the image's mean colour (thumbor's `fill(auto)`).
    var autoExtendColour = false
    var quality: Int?
    /// Autoquality (native `q=auto`, imgproxy's `autoquality`): the lowest quality within a
    /// perceptual distance, per answer.
    var autoQuality: AutoQuality?
    var format: ImageEncoding.Format?
    /// Best format (native `f=auto`, imgproxy's `f:best`): the smallest of the formats the
    /// client takes.
    var bestFormat = false
    /// A quality per output format, on its codec's scale (imgproxy's `format_quality`).
    var formatQuality: [ImageEncoding.Format: Int] = [:]
    /// The answer's bytes at most (thumbor's and imgproxy's `max_bytes`).
    var maxBytes: Int?
    /// Colour and geometry filters applied after the resize, in the URL's order (thumbor's
    /// `brightness`, `contrast`, `rgb`, `saturation`, `colorize`, `equalize`, `curve`, `noise`,
    /// `convolution`, `rotate`, `proportion`).
    var adjustments: [any ImageProcessor] = []
    /// thumbor's `adaptive-fit-in`, `full-fit-in` and `adaptive-full-fit-in` (`FitIn`), for a
    /// size with both sides; nil: the plain modes.
    var fitVariant: (adaptive: Bool, full: Bool)?
    /// A turn clockwise by a multiple of 90° before the resize (imgproxy's `rotate`); the size
    /// asked for is the turned image's.
    var rotation = 0
    /// Blocks of this many pixels after the resize (imgproxy's `pixelate`).
    var pixelate: Int?
    /// Multiplies the size asked for (or, without one, the image's), across and down (imgproxy's
    /// `zoom`).
    var zoom: (x: Double, y: Double)?
    /// The least the result may measure (imgproxy's `min-width`, `min-height`; 0: none).
    var minWidth = 0
    var minHeight = 0
    /// A border after the other steps but the watermark, in pixels of the requested size (times
    /// `dpr`), in `background` or transparent (imgproxy's `padding`: top, right, bottom, left).
    var padding: (top: Int, right: Int, bottom: Int, left: Int)?
    /// The URL's own limits on its source (imgproxy's `max_src_resolution`, `max_src_file_size`,
    /// `max_animation_frames`), each tightened into the server's.
    var sourceLimits: DecodingLimits?
    /// After this UNIX time the URL is gone (imgproxy's `expires`).
    var expires: Int64?
    /// The answer's file name and whether it is an attachment (imgproxy's `filename`,
    /// `return_attachment`): `Content-Disposition`.
    var filename: String?
    var attachment = false
    /// Answers carry `Content-Disposition` (imgproxy's always do: `inline`, or `attachment`, with
    /// `filename` or the source's name and the answer's extension).
    var contentDisposition = false
    /// The answer's `max-age` in seconds (thumbor's `max_age`), at most the server's.
    var maxAge: Int?
    /// The page of a document (PDF, TIFF) or frame of an animation to make the image from,
    /// numbered from 0 (imgproxy Pro's and weserv's `page`; `ImageRequest.page`).
    var page = 0
    /// Source types answered as they are, unprocessed, when the answer would be in that type
    /// (imgproxy's `skip_processing`): still held to the source limits.
    var skipProcessing: Set<ImageFileType> = []
    /// The source's bytes as fetched, unchecked and unprocessed (imgproxy's `raw`).
    var raw = false
    /// A HEIC's or AVIF's embedded thumbnail instead of its primary image (imgproxy's
    /// `enforce_thumbnail`; `ImageRequest.embeddedThumbnail`).
    var embeddedThumbnail = false
    /// The source's EXIF Artist and Copyright kept in the answer (JPEG, PNG and WebP stills;
    /// imgproxy's `keep_copyright`); every other piece of metadata is always stripped.
    var keepCopyright = false

    /// The frame of a video source the image is made from (native `t`, imgproxy's
    /// `video_thumbnail_second`; `ImageRequest.video`).
    var video = VideoPosition()

    /// The most a URL may name: pages past it are refused before the source is read.
    static let maxPage = 9_999

    /// `page`'s value: 0–`maxPage`.
    static func page(_ text: Substring) throws -> Int {
        guard let page = Int(text), (0...maxPage).contains(page) else { throw RequestError.invalid("page is 0–\(maxPage) (0: the first)") }
        return page
    }

    struct WatermarkOptions: Sendable {
        enum Image: Sendable {
            /// The server's configured watermark (`watermark` setting, `IMGPROXY_WATERMARK_PATH`).
            case configured
            /// An image source, read like any source.
            case source(ImageServer.Source)
            /// Text, drawn with Pango (imgproxy's `watermark_text`); its size in pixels of the
            /// requested size (times `dpr`).
            case text(TextMark)
        }
        var image: Image = .configured
        var opacity: Double = 1
        var position: Watermark.Position = .center
        var offsetX = 0
        var offsetY = 0
        /// 0: not limited; else the mark's largest width as a fraction of the image's width
        /// (imgproxy's scale, thumbor's `w_ratio`).
        var scale: Double = 0
        /// The same for heights (imgproxy's scale again, thumbor's `h_ratio`).
        var heightScale: Double = 0
        /// A soft shadow under the mark: its blur's sigma in pixels of the requested size
        /// (imgproxy's `watermark_shadow`); 0: none.
        var shadow: Double = 0
        /// The mark fitted into this box, in pixels of the requested size, when `scale` is 0
        /// (imgproxy's `watermark_size`; a 0 side follows the other).
        var size: (width: Int, height: Int)?
        /// Degrees clockwise the mark is turned (imgproxy's `watermark_rotate`).
        var rotation: Double = 0
    }

    /// Whether an imgproxy URL's `wm` has set its mark's opacity (`ImgproxyURL.updateImgproxyMark`).
    var imgproxyMarkSet = false

    /// The most marks one request may draw.
    static let maxWatermarks = 8
    /// The most tags a URL may add (`cacheTags`), and the longest.
    static let maxCacheTags = 16
    static let maxCacheTagBytes = 128

    /// Whether the chain needs a watermark image.
    var needsMark: Bool { !watermarks.isEmpty }
    /// A nine-patch frame image drawn around the result (thumbor's `frame`).
    var frame: ImageServer.Source?

    /// The processor chain, checked against the limits (`limit` per side, `maxPixels` in all).
    /// A request that is just a size with `fit`, `fill` or `exact` becomes exactly the native
    /// ad-hoc chain (`[Resize(w, h, mode)]`), so it shares that cache entry.
    /// `marks` are the images of `watermarks`, in their order (none: the marks are left out).
    func processors(limit: Int, maxPixels: Int, marks: [MarkImage] = [], frameImage: PreparedWatermark? = nil) throws -> [any ImageProcessor] {
        // `maxResultSide` with a known box: the chain made at a lower DPR, so that the largest
        // the result can be (the box or the minimum size, zoomed, with the padding) fits, as
        // imgproxy lowers its scale; the result is made small rather than shrunk afterwards (the
        // closing fit in `chain` then changes nothing).
        // (The URL's own DPR is checked first: a lowered one must not let a refused one through.)
        guard dpr > 0, dpr <= 8, dpr.isFinite else { throw RequestError.invalid("dpr is above 0 and at most 8") }
        if let side = maxResultSide, side > 0, width > 0, height > 0 {
            let zoomX = zoom?.x ?? 1, zoomY = zoom?.y ?? 1
            let padX = Double((padding?.left ?? 0) + (padding?.right ?? 0)), padY = Double((padding?.top ?? 0) + (padding?.bottom ?? 0))
            let outWidth = (Double(max(width, minWidth)) * zoomX + padX) * dpr, outHeight = (Double(max(height, minHeight)) * zoomY + padY) * dpr
            if max(outWidth, outHeight) > Double(side) {
                var lowered = self
                lowered.dpr = dpr * Double(side) / max(outWidth, outHeight)
                return try lowered.chain(limit: limit, maxPixels: maxPixels, marks: marks, frameImage: frameImage)
            }
        }
        return try chain(limit: limit, maxPixels: maxPixels, marks: marks, frameImage: frameImage)
    }

    private func chain(limit: Int, maxPixels: Int, marks: [MarkImage], frameImage: PreparedWatermark?) throws -> [any ImageProcessor] {
        var chain: [any ImageProcessor] = []
        if let trim { chain.append(trim) }
        func turn() throws {
            if rotation != 0 {
                do { chain.append(try QuarterTurn(degrees: -rotation)) } catch { throw RequestError.invalid("rotate takes 0, 90, 180 or 270 (or more turns)") }
            }
        }
        func flip() {
            if flipHorizontal || flipVertical { chain.append(Flip(horizontal: flipHorizontal, vertical: flipVertical)) }
        }
        if turnsFirst {
            try turn()
            flip()
        }
        if var crop {
            if case .size(let width, let height, _) = crop {
                guard width >= 0, height >= 0, width <= Double(limit) * 8, height <= Double(limit) * 8 else {
                    throw RequestError.invalid("crop sizes are 0–\(limit * 8)")
                }
                crop = .size(width: width, height: height, gravity: cropGravity ?? gravity)
            }
            chain.append(RegionCrop(crop))
        }
        guard dpr > 0, dpr <= 8, dpr.isFinite else { throw RequestError.invalid("dpr is above 0 and at most 8") }
        guard width >= 0, height >= 0 else { throw RequestError.invalid("width and height are 0 or more") }
        if !turnsFirst { try turn() }
        // Steps that grow the image stay within the limits too (a 422 past them).
        let outputLimit = OutputLimit(side: limit, pixels: maxPixels)
        // A zoom without a size scales the source itself (then the fit to the limit below
        // changes nothing within it).
        if let zoom, width == 0, height == 0, zoom.x != 1 || zoom.y != 1 {
            do { chain.append(try Scale(x: zoom.x, y: zoom.y, limit: outputLimit)) } catch {
                throw RequestError.invalid("zoom is above 0 and at most \(Scale.maximumFactor)")
            }
        }
        let zoomX = zoom?.x ?? 1, zoomY = zoom?.y ?? 1
        // In Double first: sides far past the limit are refused before any integer conversion.
        let scaledWidth = (Double(width) * dpr * zoomX).rounded(), scaledHeight = (Double(height) * dpr * zoomY).rounded()
        guard scaledWidth <= Double(limit), scaledHeight <= Double(limit), scaledWidth * scaledHeight <= Double(maxPixels) else {
            throw RequestError.invalid("the result is at most \(limit) pixels a side and \(maxPixels) pixels in all")
        }
        // A side that was asked for stays at least 1 pixel, however small the dpr.
        var w = width > 0 ? max(1, Int(checked: scaledWidth)) : 0, h = height > 0 ? max(1, Int(checked: scaledHeight)) : 0
        var mode = self.mode
        if w == 0 || h == 0 {
            // One side follows the other (scaled to the given side, in every mode); none: the
            // source's size, within the limit.
            if w == 0 && h == 0 { w = limit; h = limit }
            mode = .fit
            if w == 0 { w = limit }
            if h == 0 { h = limit }
            if w * h > maxPixels { h = max(1, maxPixels / w) }
        }
        // Without a size there is nothing for the dpr to multiply but the source's own size,
        // which this chain does not know: enlarging by the dpr would be silently dropped.
        if width == 0, height == 0, dpr != 1, enlarge == true {
            throw RequestError.invalid("dpr with enlarge needs a width or a height")
        }
        let upscale = (width == 0 && height == 0) ? false : enlarge
        if let fitVariant, width > 0, height > 0 {
            chain.append(FitIn(width: w, height: h, adaptive: fitVariant.adaptive, full: fitVariant.full, upscale: upscale ?? false,
                               limit: outputLimit))
        } else {
            chain.append(Resize(width: w, height: h, mode: mode, upscale: upscale,
                                gravity: mode == .fit || mode == .exact ? .center : gravity.scalingOffsets(by: dpr)))
        }
        if minWidth > 0 || minHeight > 0 {
            chain.append(MinimumSize(width: Int(checked: (Double(minWidth) * dpr).rounded()), height: Int(checked: (Double(minHeight) * dpr).rounded()),
                                     limit: outputLimit))
        }
        // thumbor flips while it resizes: after its crops, before its `fill`.
        if !turnsFirst { flip() }
        let extendRGB = extendColour ?? background ?? (255, 255, 255)
        if extend, width > 0 || height > 0 {
            // A side not asked for is not extended (the canvas is never smaller than the image).
            let colour = extendRGB
            var pad = Pad(width: width > 0 ? w : 1, height: height > 0 ? h : 1, red: colour.red, green: colour.green, blue: colour.blue,
                          alpha: transparentExtend ? 0 : 255, gravity: (extendGravity ?? .center).scalingOffsets(by: dpr))
            pad.autoColour = autoExtendColour
            // (A turned box pads to the turned size: thumbor's adaptive-fit-in with fill.)
            pad.adaptive = fitVariant?.adaptive == true
            chain.append(pad)
        }
        if aspectExtend, width > 0, height > 0 {
            let pad = Pad(width: w, height: h, red: extendRGB.red, green: extendRGB.green, blue: extendRGB.blue,
                          alpha: transparentExtend ? 0 : 255, gravity: (aspectExtendGravity ?? .center).scalingOffsets(by: dpr))
            chain.append(AspectExtend(pad, limit: outputLimit))
        }
        if let blur {
            guard blur > 0, blur <= 250 else { throw RequestError.invalid("blur is above 0 and at most 250") }
            if let blurRadius {
                guard blurRadius >= 1, blurRadius <= 150 else { throw RequestError.invalid("blur radius is 1–150") }
                chain.append(GaussianBlur(sigma: blur, radius: blurRadius))
            } else {
                chain.append(GaussianBlur(sigma: blur))
            }
        }
        if let sharpen {
            guard sharpen > 0, sharpen <= 10, let step = try? Sharpen.validated(sigma: sharpen) else {
                throw RequestError.invalid("sharpen is above 0 and at most 10")
            }
            chain.append(step)
        }
        if let waveletSharpen { chain.append(waveletSharpen) }
        if let pixelate {
            do { chain.append(try Pixelate(size: max(1, Int(checked: (Double(pixelate) * dpr).rounded())))) } catch {
                throw RequestError.invalid("pixelate is 1–\(Pixelate.maximumSize)")
            }
        }
        if grayscale { chain.append(Grayscale()) }
        chain.append(contentsOf: adjustments)
        if frame != nil, let frameImage {
            do { chain.append(try NinePatchFrame(frame: frameImage.image, frameIdentifier: frameImage.identifier, limit: outputLimit)) } catch {
                throw RequestError.invalid("bad frame: \(error)")
            }
        }
        if let cornerRadii {
            guard cornerRadii.x >= 0, cornerRadii.y >= 0, cornerRadii.x <= Double(limit), cornerRadii.y <= Double(limit) else {
                throw RequestError.invalid("round_corner radii are 0–\(limit)")
            }
            chain.append(RoundedCorners(radiusX: cornerRadii.x, radiusY: cornerRadii.y, fill: cornerColour))
        }
        if let padding {
            func scaled(_ side: Int) -> Int { Int(checked: (Double(side) * dpr).rounded()) }
            let colour = background ?? (255, 255, 255)
            do {
                var border = try Border(top: scaled(padding.top), right: scaled(padding.right), bottom: scaled(padding.bottom),
                                        left: scaled(padding.left), red: colour.red, green: colour.green, blue: colour.blue,
                                        alpha: background == nil ? 0 : 255)
                border.limit = outputLimit
                chain.append(border)
            } catch {
                throw RequestError.invalid("padding is 0–\(Border.maximumWidth) pixels a side")
            }
        }
        guard watermarks.count <= Self.maxWatermarks else { throw RequestError.invalid("at most \(Self.maxWatermarks) watermarks a request") }
        for (watermark, mark) in zip(watermarks, marks) {
            guard (0...1).contains(watermark.opacity), (0...1).contains(watermark.scale), (0...1).contains(watermark.heightScale),
                  (0...Watermark.maxShadowSigma).contains(watermark.shadow) else {
                throw RequestError.invalid("watermark opacity and scale are 0–1, its shadow 0–\(Int(Watermark.maxShadowSigma))")
            }
            // Offsets, shadows and sizes are in the pixels of the requested size, so they scale
            // with the dpr.
            func scaled(_ value: Int) -> Int { Int(checked: (Double(value) * dpr).rounded()) }
            do {
                var step = try Watermark.validated(mark: mark.image, markIdentifier: mark.identifier,
                                                   opacity: watermark.opacity, position: watermark.position,
                                                   offsetX: scaled(watermark.offsetX), offsetY: scaled(watermark.offsetY),
                                                   scale: watermark.scale, heightScale: watermark.heightScale)
                // The box in the pixels of the result (its identity is in the step's).
                step.box = watermark.size.map { (scaled($0.width), scaled($0.height)) }
                step.shadowSigma = min(Watermark.maxShadowSigma, watermark.shadow * dpr)
                step.rotation = watermark.rotation
                chain.append(step)
            } catch {
                throw RequestError.invalid("bad watermark: \(error)")
            }
        }
        if let maxResultSide {
            // Where `processors` could not lower the DPR (a side not asked for, so no known
            // box): the result, marks and padding included, scaled down together (never up).
            guard maxResultSide > 0 else { throw RequestError.invalid("max_result_dimension is above 0") }
            chain.append(Resize(width: min(maxResultSide, limit), height: min(maxResultSide, limit), mode: .fit, upscale: false))
        }
        if let background, !transparentExtend {
            chain.append(Flatten(red: background.red, green: background.green, blue: background.blue))
        }
        return chain
    }

    /// Gravity names shared by the URL styles: imgproxy's (`ce`, `no`, `so`, `ea`, `we`,
    /// `noea`, `nowe`, `soea`, `sowe`, `sm`) and the native ones (`c`, `n`, …, `entropy`).
    static func gravity(named name: Substring) -> Gravity? {
        switch name {
        case "ce", "c", "center", "centre": .center
        case "no", "n", "north": .north
        case "so", "s", "south": .south
        case "ea", "e", "east": .east
        case "we", "w", "west": .west
        case "noea", "ne": .northEast
        case "nowe", "nw": .northWest
        case "soea", "se": .southEast
        case "sowe", "sw": .southWest
        case "sm", "smart", "attention": .smart(.attention)
        case "entropy": .smart(.entropy)
        case "face", "faces": .smart(.face)
        default: nil
        }
    }

    /// A colour as `RRGGBB`, `RGB` (hex, an optional `#`) or a CSS basic colour name.
    static func colour(_ text: Substring) -> (red: UInt8, green: UInt8, blue: UInt8)? {
        let named: [Substring: (UInt8, UInt8, UInt8)] = [
            "white": (255, 255, 255), "black": (0, 0, 0), "red": (255, 0, 0), "green": (0, 128, 0), "blue": (0, 0, 255),
            "yellow": (255, 255, 0), "gray": (128, 128, 128), "grey": (128, 128, 128), "silver": (192, 192, 192),
            "orange": (255, 165, 0), "purple": (128, 0, 128), "navy": (0, 0, 128), "teal": (0, 128, 128),
        ]
        let lower = Substring(text.lowercased())
        if let colour = named[lower] { return colour }
        let hex = lower.hasPrefix("#") ? lower.dropFirst() : lower
        // ASCII hex digits only (`isHexDigit` also takes fullwidth forms).
        let values = hex.compactMap { $0.isASCII ? $0.hexDigitValue : nil }
        guard values.count == hex.count, values.count == 3 || values.count == 6 else { return nil }
        let digits = values.count == 3 ? values.flatMap { [$0, $0] } : values
        func byte(_ i: Int) -> UInt8 { UInt8(digits[i] * 16 + digits[i + 1]) }
        return (byte(0), byte(2), byte(4))
    }
}

/// A watermark's image and its identity (a prepared source's, or a text mark's).
struct MarkImage: Sendable {
    var image: Bitmap
    var identifier: String
}

extension Watermark.Position {
    /// The position of a gravity (the nine directions; nil for the others).
    init?(_ gravity: Gravity) {
        switch gravity {
        case .center: self = .center
        case .north: self = .north
        case .south: self = .south
        case .east: self = .east
        case .west: self = .west
        case .northEast: self = .northEast
        case .northWest: self = .northWest
        case .southEast: self = .southEast
        case .southWest: self = .southWest
        default: return nil
        }
    }
}
