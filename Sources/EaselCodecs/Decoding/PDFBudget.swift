import CPDF
import Foundation

/// What a PDF may ask of poppler, checked before poppler reads it: each limit stops a known way to
/// make a small file cost minutes or gigabytes (a form drawing the next one 8 times, 12 deep; two
/// million unrestored `q`), with a `corrupt` error that names the limit (a 422 in the server).
/// Content streams are inflated and tokenised without poppler, where poppler would run (in the
/// render worker, under its limits, when `RenderIsolation` is on); forms count as often as they
/// are drawn. What gets past is contained by the render worker's limits.
public struct PDFBudget: Sendable, Hashable {
    /// Objects in the file (default 1,000,000).
    public var maxObjects = 1_000_000
    /// Bytes one stream may inflate to (default 64 MiB).
    public var maxStreamBytes = 64 << 20
    /// Bytes all the streams may inflate to together (default 256 MiB).
    public var maxTotalBytes = 256 << 20
    /// Graphics states saved (`q`) and not yet restored, at once (default 1,000).
    public var maxSaveDepth = 1000
    /// Operators drawn, each form counted as often as it is drawn (default 10,000,000).
    public var maxOperators = 10_000_000

    /// The defaults above.
    public init() {}

    /// The budget every PDF decode checks.
    public static let `default` = PDFBudget()

    /// The budget as the C checker takes it.
    var limits: easel_pdf_budget {
        easel_pdf_budget(max_objects: maxObjects, max_stream_bytes: maxStreamBytes, max_total_bytes: maxTotalBytes,
                         max_save_depth: maxSaveDepth, max_operators: maxOperators)
    }
}
