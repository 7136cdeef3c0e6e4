import CSVG
import Foundation

/// What an SVG may hold before librsvg is asked to read it: each limit stops a known way to crash,
/// hang or bloat the renderer, with a `corrupt` error that names the limit (a 422 in the server),
/// before any worker is asked (`RenderIsolation` contains what gets past).
///
/// The defaults are far above what drawings, icons and charts use.
public struct SVGBudget: Sendable, Hashable {
    /// Elements nested (default 128).
    public var maxDepth = 128
    /// Filter primitives (`fe*` elements) in all (default 200).
    public var maxFilterPrimitives = 200
    /// `feTurbulence`'s `numOctaves` (default 10: each octave is a pass over every pixel).
    public var maxOctaves = 10
    /// `feConvolveMatrix`'s order, each side (default 9; its kernel must have order × order values).
    public var maxKernelOrder = 9
    /// `<use>` elements (default 5,000).
    public var maxUses = 5000
    /// `<mask>` elements (default 64: each is a surface the size of the render).
    public var maxMasks = 64
    /// Bytes of text inside `<text>` elements (default 20,000).
    public var maxTextBytes = 20_000
    /// Bytes of CSS in `<style>` elements (default 256 KiB).
    public var maxStyleBytes = 256 << 10
    /// Parentheses, brackets and braces nested in CSS (default 32).
    public var maxCSSNesting = 32
    /// Any font size, as an attribute or in CSS, in its own units (default 2,048).
    public var maxFontSize = 2048.0

    /// The defaults above.
    public init() {}

    /// The budget every SVG decode checks.
    public static let `default` = SVGBudget()

    /// Checks `bytes` against the budget.
    /// - Throws: `CodecError.corrupt` naming the limit passed.
    func check(_ bytes: [UInt8]) throws(CodecError) {
        var budget = easel_svg_budget(
            max_depth: maxDepth, max_filter_primitives: maxFilterPrimitives, max_octaves: maxOctaves, max_kernel_order: maxKernelOrder,
            max_uses: maxUses, max_masks: maxMasks, max_text_characters: maxTextBytes, max_style_bytes: maxStyleBytes,
            max_css_nesting: maxCSSNesting, max_font_size: maxFontSize)
        var message = [CChar](repeating: 0, count: Int(EASEL_SVG_MESSAGE_SIZE))
        let passed = bytes.withUnsafeBufferPointer { document in
            message.withUnsafeMutableBufferPointer { easel_svg_check_budget(document.baseAddress, document.count, &budget, $0.baseAddress) }
        }
        try checkLibrary(passed, library: "libxml2", message: cMessage(message))
        guard passed == 1 else { throw SVGCodec.corrupt(cMessage(message)) }
    }
}
