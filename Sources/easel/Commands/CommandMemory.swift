import EaselCodecs
import EaselPipeline
import EaselServer
import Foundation

/// What the command line decodes under: limits that follow memory rather than a pixel count.
///
/// A file is mapped rather than read (``InputFile``), and JPEG, PNG, TIFF, WebP, BMP and GIF
/// sources shrink while they decode, so a photo's size is no longer what bounds its memory. Each file is
/// admitted by its estimated peak bytes (``MemoryEstimate``, from its header) against a memory
/// budget shared by the files made at once (`--memory-budget`, by default a quarter of the
/// machine's memory, as the server's). Past that, the pixel limit is a ceiling on time, not on
/// memory: a gigapixel. The server keeps its own conservative limits (`maxSourcePixels`, 50
/// million, as imgproxy's `IMGPROXY_MAX_SRC_RESOLUTION`), because it decodes what strangers send.
enum CommandLimits {
    /// Most pixels a source may have (width × height): a billion (a 31,622² image).
    static let maxPixels = 1_000_000_000
    /// Largest input file: 4 GiB (mapped, not read into memory).
    static let maxInputBytes = 4 << 30

    /// The decoding limits: ``maxPixels`` and ``maxInputBytes``, the rest at their defaults.
    static var decoding: DecodingLimits { DecodingLimits(maxPixels: maxPixels, maxInputBytes: maxInputBytes) }

    /// The budget's default: a quarter of the machine's memory, at least 256 MiB.
    static var defaultMemoryBudget: Int { max(256 << 20, Int(clamping: ProcessInfo.processInfo.physicalMemory / 4)) }

    /// The bytes a file is admitted by: the estimate of its decode and processing, and the file's
    /// own bytes where its decoder keeps them resident (`ImageDecoder.handsBackPages`: every
    /// decoder but those that hand a mapped file's pages back as they read, and an animation's).
    static func peakBytes(of input: InputFile, info: ImageInfo, decodedSize: (width: Int, height: Int), animated: Bool) -> Int {
        let estimate = MemoryEstimate.peakBytes(info: info, decodedSize: decodedSize, animated: animated)
        let handsBack = input.isMapped && !(animated && info.isAnimated) && ImageDecoder.handsBackPages(info, decodedSize: decodedSize)
        let (sum, overflow) = estimate.addingReportingOverflow(handsBack ? 0 : input.data.count)
        return overflow ? Int.max : sum
    }
}

/// The memory budget of one run of `easel thumbnail`: the files being made at once reserve
/// their estimated peak bytes before they decode; one that does not fit waits for others to
/// finish, and one whose estimate alone is past the budget is refused, naming it.
///
/// `@unchecked Sendable`: `reserved` is read and written only while `condition` is locked (in
/// `reserve` and `release`); `bytes` is immutable.
final class CommandMemoryBudget: @unchecked Sendable {
    struct Refused: Error, CustomStringConvertible {
        let needed: Int, budget: Int
        var description: String {
            "needs about \(needed >> 20) MiB to decode, past the memory budget of \(budget >> 20) MiB (--memory-budget)"
        }
    }

    let bytes: Int
    private let condition = NSCondition()
    private var reserved = 0

    init(bytes: Int) { self.bytes = bytes }

    /// Runs `body` with `needed` bytes reserved, waiting until they fit beside the others'.
    func withReservation<T>(_ needed: Int, _ body: () throws -> T) throws -> T {
        guard needed <= bytes else { throw Refused(needed: needed, budget: bytes) }
        reserve(needed)
        defer { release(needed) }
        return try body()
    }

    private func reserve(_ needed: Int) {
        condition.lock()
        defer { condition.unlock() }
        // (Alone, anything within the budget fits: no file waits for nothing.)
        while reserved > 0, needed > bytes - reserved { condition.wait() }
        reserved += needed
    }

    private func release(_ needed: Int) {
        condition.lock()
        defer { condition.unlock() }
        reserved -= needed
        condition.broadcast()
    }
}

extension InputFile {
    /// The image decoded at the size `covering` asks for (the whole image without), within
    /// `budget` and the command line's limits; ``InputFile/Failure/changedWhileRead(path:)``
    /// when the file changed while it was read.
    func decoded(info: ImageInfo, covering: (width: Int, height: Int)?, budget: CommandMemoryBudget) throws -> Bitmap {
        let size = ImageDecoder.decodedSize(of: info, covering: covering)
        let peak = CommandLimits.peakBytes(of: self, info: info, decodedSize: size, animated: false)
        return try decoding { data in
            try budget.withReservation(peak) { try ImageDecoder.decode(data, info: info, covering: covering, limits: CommandLimits.decoding) }
        }
    }
}
