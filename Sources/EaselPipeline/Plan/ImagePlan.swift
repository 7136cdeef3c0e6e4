import EaselCodecs
import EaselSupport
import Foundation

/// What a request does to the pixels, as values: geometry, effects, marks and output. Every URL
/// style's parser (native, imgproxy, thumbor), the CLI and Swift callers build one; its steps
/// (`processors`, in one declared order) are what the pipeline runs, so equal requests in any
/// style share one cache entry, one purge and one set of limits.
///
/// Sides and offsets are in pixels of the requested size (the DPR multiplies them); a source
/// (a fallback image, a watermark, a frame) is named, not read: whoever answers reads it.
public struct ImagePlan: Sendable {
    /// Where an image comes from, as a request names it: a path under the pipeline's origin
    /// (its segments, decoded) or an absolute URL (`http(s)://`, `s3://`).
    public enum Source: Sendable, Hashable {
        /// A file under the pipeline's origin: its path segments, decoded.
        case path([String])
        /// An absolute URL (`http(s)://`, `s3://`), checked by whoever reads it.
        case remote(URL)
    }

    /// Requested size; 0 follows the other side (both 0: the source's size, within the limits).
    public var width = 0
    /// The requested height (see `width`).
    public var height = 0
    /// How the size is met: fit inside, fill and crop, fill-down, auto or exact.
    public var mode: ResizeMode = .fit
    /// nil: the mode's default (`fill` and `exact` enlarge, the others do not).
    public var enlarge: Bool?
    /// Where a fill's crop (and a crop given as a size, unless `cropGravity`) is placed.
    public var gravity: Gravity = .center
    /// Multiplies the size (never past the source's size unless enlarging is allowed).
    public var dpr: Double = 1
    /// The width and the DPR come from the client's Client Hints (native `w=auto`, `dpr=auto`;
    /// `ImageServer.applyHints`).
    public var widthFromHints = false
    /// The DPR comes from the client's Client Hints (see `widthFromHints`).
    public var dprFromHints = false
    /// Extends the result to the requested size with `background` (imgproxy `extend`, thumbor
    /// `fill` with `fit-in`).
    public var extend = false
    /// Cut before the resize.
    public var crop: RegionCrop.Region?
    /// Where a `crop` given as a size is placed (nil: `gravity`, resolved when the chain is made,
    /// so a later `g` applies as in imgproxy).
    public var cropGravity: Gravity?
    /// Where `extend` places the image (nil: the centre).
    public var extendGravity: Gravity?
    /// Extends the result to the requested size's aspect ratio, when both sides are asked for
    /// (imgproxy's `extend_aspect_ratio`), placed by `aspectExtendGravity` (nil: the centre), in
    /// `extend`'s colour.
    public var aspectExtend = false
    /// Where `aspectExtend` places the image (nil: the centre).
    public var aspectExtendGravity: Gravity?
    /// The result at most this many pixels a side, everything that grows it included (imgproxy's
    /// `max_result_dimension`): made at a lower DPR where the box is known, else scaled down at
    /// the end (`processors`); nil: no such limit.
    public var maxResultSide: Int?
    /// An image answered when the source is missing or cannot be decoded, made as the source
    /// would have been (imgproxy's `fallback_image_url`); nil: the server's.
    public var fallback: ImagePlan.Source?
    /// Tags added to the answer's cache tags (imgproxy's `cache_tags`), after the sources'.
    public var cacheTags: [String] = []
    /// A uniform border removed first (thumbor `trim`, Euclidean tolerance 0–442).
    public var trim: Trim?
    /// Mirrored left to right.
    public var flipHorizontal = false
    /// Mirrored top to bottom.
    public var flipVertical = false
    /// `rotation` and the flips apply to the source before any crop or resize, so that crops and
    /// gravities act on the turned image (imgproxy's order). Otherwise the flips come after the
    /// resize, before anything is added around the image (thumbor's).
    public var turnsFirst = false
    /// The crop, resize, extensions and padding sized as imgproxy sizes them (`ImgproxyGeometry`:
    /// its DPR cap, `force`, minimum sizes, zoom, `max_result_dimension`, centring and offsets),
    /// set by imgproxy's parser. A plan that is only a `fit` or centred `fill` box keeps the
    /// shared resize (`usesImgproxyGeometry`), whose answer is the same.
    public var imgproxyGeometry = false
    /// A Gaussian blur with this sigma, after the resize (0–250).
    public var blur: Double?
    /// The blur kernel's radius in pixels (thumbor's `blur(radius, sigma)`); nil: 3 × sigma.
    public var blurRadius: Int?
    /// Unsharp mask with this sigma (native `sharpen`, imgproxy `sh`).
    public var sharpen: Double?
    /// thumbor's `sharpen(amount, radius, luminance_only)`: wavelet detail boost.
    public var waveletSharpen: WaveletSharpen?
    /// The result in shades of gray.
    public var grayscale = false
    /// Rounded corners with these radii, across and down (thumbor `round_corner(a|b, …)`).
    public var cornerRadii: (x: Double, y: Double)?
    /// The rounded corners' colour (nil: transparent corners).
    public var cornerColour: (red: UInt8, green: UInt8, blue: UInt8)?
    /// Marks drawn over the result, in order (the last on top): images and text.
    public var watermarks: [Mark] = []
    /// Composited under transparent pixels (and the colour of `extend` unless `extendColour`
    /// names one).
    public var background: (red: UInt8, green: UInt8, blue: UInt8)?
    /// The background's alpha: below 255, transparent pixels are composited onto a translucent
    /// colour (thumbor's `background_color(rrggbbaa)`) and the answer keeps alpha.
    public var backgroundAlpha: UInt8 = 255
    /// Without a background, a JPEG answer drops alpha and shows the colour under transparent
    /// pixels (`DropAlpha`), as thumbor's PIL engine does, instead of compositing on white.
    public var dropsAlphaForJPEG = false
    /// The colour `extend` pads with (thumbor's `fill`), when it is not `background`.
    public var extendColour: (red: UInt8, green: UInt8, blue: UInt8)?
    /// `extend` with a transparent canvas.
    public var transparentExtend = false
    /// `extend` with the image's mean colour (thumbor's `fill(auto)`).
    public var autoExtendColour = false
    /// The output quality on JPEG's scale (each codec's own derived from it); nil: the style's default.
    public var quality: Int?
    /// Autoquality (native `q=auto`, imgproxy's `autoquality`): the lowest quality within a
    /// perceptual distance, per answer.
    public var autoQuality: AutoQuality?
    /// The output format, pinned; nil: negotiated from what the client accepts.
    public var format: ImageEncoding.Format?
    /// Best format (native `f=auto`, imgproxy's `f:best`): the smallest of the formats the
    /// client takes.
    public var bestFormat = false
    /// Without `format`: the answer in the source's own format (JPEG, PNG, GIF, WebP, AVIF,
    /// HEIC; animations whole), else JPEG, whatever the client accepts: thumbor's rule.
    public var keepsSourceFormat = false
    /// With `keepsSourceFormat`: an animated source is answered as animated WebP, a still in its
    /// own format (thumbor's `gifv`, whose video this stands in for).
    public var animationsAsWebP = false
    /// thumbor's `orig` as a side (`origx300`): that side is the source's own (after any trim or
    /// crop), the other as asked.
    public var widthIsSource = false, heightIsSource = false
    /// A fill cuts the source to the box's ratio first, placed and rounded as thumbor does, and
    /// resizes the cut (`ThumborFill`), instead of resizing and then cutting.
    public var thumborFill = false
    /// A quality per output format, on its codec's scale (imgproxy's `format_quality`).
    public var formatQuality: [ImageEncoding.Format: Int] = [:]
    /// The answer's bytes at most (thumbor's and imgproxy's `max_bytes`).
    public var maxBytes: Int?
    /// Colour and geometry filters applied after the resize, in the URL's order (thumbor's
    /// `brightness`, `contrast`, `rgb`, `saturation`, `colorize`, `equalize`, `curve`, `noise`,
    /// `convolution`, `rotate`, `proportion`).
    public var adjustments: [any ImageProcessor] = []
    /// thumbor's `adaptive-fit-in`, `full-fit-in` and `adaptive-full-fit-in` (`FitIn`), for a
    /// size with both sides; nil: the plain modes.
    public var fitVariant: (adaptive: Bool, full: Bool)?
    /// A turn clockwise by a multiple of 90° before the resize (imgproxy's `rotate`); the size
    /// asked for is the turned image's.
    public var rotation = 0
    /// Blocks of this many pixels after the resize (imgproxy's `pixelate`).
    public var pixelate: Int?
    /// Multiplies the size asked for (or, without one, the image's), across and down (imgproxy's
    /// `zoom`).
    public var zoom: (x: Double, y: Double)?
    /// The least the result may measure (imgproxy's `min-width`, `min-height`; 0: none).
    public var minWidth = 0
    /// The least height (see `minWidth`).
    public var minHeight = 0
    /// A border after the other steps but the watermark, in pixels of the requested size (times
    /// `dpr`), in `background` or transparent (imgproxy's `padding`: top, right, bottom, left).
    public var padding: (top: Int, right: Int, bottom: Int, left: Int)?
    /// The URL's own limits on its source (imgproxy's `max_src_resolution`, `max_src_file_size`,
    /// `max_animation_frames`), each tightened into the server's.
    public var sourceLimits: DecodingLimits?
    /// After this UNIX time the URL is gone (imgproxy's `expires`).
    public var expires: Int64?
    /// The answer's file name and whether it is an attachment (imgproxy's `filename`,
    /// `return_attachment`): `Content-Disposition`.
    public var filename: String?
    /// Answered as an attachment (`Content-Disposition: attachment`).
    public var attachment = false
    /// Answers carry `Content-Disposition` (imgproxy's always do: `inline`, or `attachment`, with
    /// `filename` or the source's name and the answer's extension).
    public var contentDisposition = false
    /// The answer's `max-age` in seconds (thumbor's `max_age`), at most the server's.
    public var maxAge: Int?
    /// An empty plan: the source at its own size, as it is.
    public init() {}

    /// The page of a document (PDF, TIFF) or frame of an animation to make the image from,
    /// numbered from 0 (imgproxy Pro's and weserv's `page`; `ImageRequest.page`).
    public var page = 0
    /// Source types answered as they are, unprocessed, when the answer would be in that type
    /// (imgproxy's `skip_processing`): still held to the source limits.
    public var skipProcessing: Set<ImageFileType> = []
    /// The source's bytes as fetched, unchecked and unprocessed (imgproxy's `raw`).
    public var raw = false
    /// A HEIC's or AVIF's embedded thumbnail instead of its primary image (imgproxy's
    /// `enforce_thumbnail`; `ImageRequest.embeddedThumbnail`).
    public var embeddedThumbnail = false
    /// False leaves the source's EXIF orientation unapplied (imgproxy's `auto_rotate:0`;
    /// `ImageRequest.autoRotate`).
    public var autoRotate = true
    /// The source's EXIF Artist and Copyright kept in the answer (JPEG, PNG and WebP stills;
    /// imgproxy's `keep_copyright`); every other piece of metadata is always stripped.
    public var keepCopyright = false

    /// The frame of a video source the image is made from (native `t`, imgproxy's
    /// `video_thumbnail_second`; `ImageRequest.video`).
    public var video = VideoPosition()

    /// The most a URL may name: pages past it are refused before the source is read.
    public static let maxPage = 9_999

    /// `page`'s value: 0–`maxPage`.
    public static func page(_ text: Substring) throws -> Int {
        guard let page = Int(text), (0...maxPage).contains(page) else { throw PlanError.invalid("page is 0–\(maxPage) (0: the first)") }
        return page
    }

    /// A mark drawn over the result: an image or text, where and how.
    public struct Mark: Sendable {
        /// What a mark draws.
        public enum Image: Sendable {
            /// The server's configured watermark (`watermark` setting, `IMGPROXY_WATERMARK_PATH`).
            case configured
            /// An image source, read like any source.
            case source(ImagePlan.Source)
            /// Text, drawn with Pango (imgproxy's `watermark_text`); its size in pixels of the
            /// requested size (times `dpr`).
            case text(TextMark)
        }
        /// The mark's image.
        public var image: Image = .configured
        /// 0–1, multiplied with the mark's own alpha.
        public var opacity: Double = 1
        /// Where the mark goes (a direction, or tiled).
        public var position: Watermark.Position = .center
        /// Moved this many pixels of the requested size inward across, and down (`offsetY`).
        public var offsetX = 0
        /// See `offsetX`.
        public var offsetY = 0
        /// When set, the horizontal offset is this fraction (0–100) of the width of the image the
        /// mark is drawn on, not `offsetX` (thumbor's `20p` is 0.2).
        public var relativeOffsetX: Double?
        /// When set, the vertical offset is this fraction (0–1) of the image's height.
        public var relativeOffsetY: Double?
        /// 0: not limited; else the mark's largest width as a fraction of the image's width
        /// (imgproxy's scale, thumbor's `w_ratio`).
        public var scale: Double = 0
        /// The same for heights (imgproxy's scale again, thumbor's `h_ratio`).
        public var heightScale: Double = 0
        /// A soft shadow under the mark: its blur's sigma in pixels of the requested size
        /// (imgproxy's `watermark_shadow`); 0: none.
        public var shadow: Double = 0
        /// The mark fitted into this box, in pixels of the requested size, when `scale` is 0
        /// (imgproxy's `watermark_size`; a 0 side follows the other).
        public var size: (width: Int, height: Int)?
        /// Degrees clockwise the mark is turned (imgproxy's `watermark_rotate`).
        public var rotation: Double = 0

        /// A centred, opaque mark of the configured watermark.
        public init() {}
    }

    /// Whether an imgproxy URL's `wm` has set its mark's opacity (`ImgproxyURL.updateImgproxyMark`).
    public var imgproxyMarkSet = false

    /// The most marks one request may draw.
    public static let maxWatermarks = 8
    /// The most tags a URL may add (`cacheTags`).
    public static let maxCacheTags = 16
    /// The longest cache tag, in bytes.
    public static let maxCacheTagBytes = 128

    /// Whether the chain needs a watermark image.
    public var needsMark: Bool { !watermarks.isEmpty }
    /// A nine-patch frame image drawn around the result (thumbor's `frame`).
    public var frame: ImagePlan.Source?
}
