import CText
import EaselSupport
import Foundation

/// Text drawn with Pango and cairo, to be used as a watermark (`Watermark`'s mark).
///
/// ```swift
/// let mark = TextMark(text: "© Easel", font: "DejaVu Sans Bold", size: 32, color: (255, 255, 255))
/// let stamp = try mark.render()   // RGBA, transparent around the glyphs
/// ```
///
/// The text may be Pango markup (`<b>`, `<span foreground="…" font="…">`: imgproxy's
/// `watermark_text`), checked before anything is drawn. Fonts come from fontconfig; a family
/// that is not installed falls back to fontconfig's choice. Glyphs are drawn with grayscale
/// antialiasing and no hinting, so the pixels do not depend on the machine's font settings.
public struct TextMark: Sendable, Hashable {
    /// The text (UTF-8), or Pango markup when `markup` is set.
    public var text: String
    /// Whether `text` is Pango markup.
    public var markup: Bool
    /// A Pango font description without a size ("DejaVu Sans Bold", "serif italic").
    public var font: String
    /// The size in pixels (the em).
    public var size: Double
    /// The text's colour (markup may give spans their own).
    public var color: (red: UInt8, green: UInt8, blue: UInt8)
    /// Lines wrap at this many pixels (at words, then characters); 0: only at newlines.
    public var maxWidth: Int
    /// How the lines are aligned.
    public var alignment: Alignment

    /// Line alignment.
    public enum Alignment: Int32, Sendable, Hashable {
        /// Lines start at the left edge.
        case left = 0
        /// Lines are centred.
        case center = 1
        /// Lines end at the right edge.
        case right = 2
    }

    /// The most text a mark takes, in UTF-8 bytes.
    public static let maxTextBytes = 4096
    /// The largest size in pixels.
    public static let maxSize = 1024.0

    /// A mark of `text` in `font` at `size` pixels (defaults: imgproxy's — black `sans` at 16 px).
    public init(text: String, markup: Bool = false, font: String = "sans", size: Double = 16,
                color: (red: UInt8, green: UInt8, blue: UInt8) = (0, 0, 0), maxWidth: Int = 0, alignment: Alignment = .left) {
        self.text = text
        self.markup = markup
        self.font = font
        self.size = size
        self.color = color
        self.maxWidth = maxWidth
        self.alignment = alignment
    }

    /// Equal marks draw the same pixels (`canonicalDescription`).
    public static func == (a: TextMark, b: TextMark) -> Bool { a.canonicalDescription == b.canonicalDescription }
    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) { hasher.combine(canonicalDescription) }

    /// The same mark `factor` times as large (its size and wrap width): for a DPR.
    public func scaled(by factor: Double) -> TextMark {
        var copy = self
        copy.size = size * factor
        copy.maxWidth = Int(checked: (Double(maxWidth) * factor).rounded())
        return copy
    }

    /// Everything that makes the pixels, in one string (the text last, whole): what a cache
    /// key of a variant made with the mark derives from (hash it with a cryptographic hash, so
    /// no crafted text can take another's key).
    public var canonicalDescription: String {
        // (The font is prefixed by its length, so no font and text can read as another's.)
        "\(markup ? 1 : 0)|\(font.utf8.count):\(font)|\(size)|\(color.red),\(color.green),\(color.blue)|\(maxWidth)|\(alignment.rawValue)|\(text)"
    }

    /// The text as RGBA8 with straight alpha, as large as what is drawn.
    /// - Throws: `CodecError.invalidParameters` for empty or oversized text, a size outside
    ///   (0, `maxSize`], markup that does not parse (with Pango's message), or a result larger
    ///   than `maxSide` pixels a side.
    public func render(maxSide: Int = 8192) throws -> Bitmap {
        guard !text.isEmpty, text.utf8.count <= Self.maxTextBytes else {
            throw CodecError.invalidParameters("a text mark has 1–\(Self.maxTextBytes) bytes of text")
        }
        guard size > 0, size <= Self.maxSize, maxWidth >= 0, maxWidth <= maxSide else {
            throw CodecError.invalidParameters("a text mark's size is above 0 and at most \(Int(Self.maxSize)) pixels, its width 0–\(maxSide)")
        }
        guard text.utf8.count * Int(size.rounded(.up)) <= Int(EASEL_TEXT_MAX_BYTES_TIMES_SIZE) else {
            throw CodecError.invalidParameters("a text mark of \(text.utf8.count) bytes at \(size) pixels is too large")
        }
        var message = [CChar](repeating: 0, count: Int(EASEL_TEXT_MESSAGE_SIZE))
        return try text.withCString { textPointer in
            try font.withCString { fontPointer -> Bitmap in
                var style = easel_text_style(text: textPointer, markup: markup ? 1 : 0, font: fontPointer, size: size,
                                             max_width: Int32(clamping: maxWidth), alignment: alignment.rawValue,
                                             red: color.red, green: color.green, blue: color.blue)
                var width: Int32 = 0, height: Int32 = 0
                let measured = easel_text_measure(&style, &width, &height, &message)
                try checkLibrary(measured, library: "Pango", message: cMessage(message))
                guard measured == 1 else { throw CodecError.invalidParameters("text mark: \(cMessage(message))") }
                guard width > 0, height > 0, Int(width) <= maxSide, Int(height) <= maxSide else {
                    throw CodecError.invalidParameters("a text mark of \(width)×\(height) pixels is larger than \(maxSide) a side")
                }
                var bitmap = Bitmap(width: Int(width), height: Int(height), pixelFormat: .rgba8)
                let rowBytes = bitmap.rowBytes
                let drawn = bitmap.withUnsafeMutableBytes { bytes in
                    easel_text_render(&style, bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), rowBytes, width, height, &message)
                }
                guard drawn == 1 else { throw CodecError.invalidParameters("text mark: \(cMessage(message))") }
                return bitmap
            }
        }
    }
}
