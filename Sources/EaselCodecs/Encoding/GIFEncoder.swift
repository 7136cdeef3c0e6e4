import CGIF
import Foundation

/// Writes a GIF (an animation, or a still) one frame at a time through giflib: each frame is
/// full-size with a palette of its own, made by median cut over its colours (`Quantizer`);
/// pixels under half opacity become the transparent index (GIF's alpha is one bit), and every
/// frame is cleared after it is shown (each is full-size, so the frame before never shows
/// through the next one's transparent pixels). Delays are rounded to GIF's centiseconds; the
/// loop count is the first frame's plays (GIF's own field counts repeats). Sides are at most
/// 65,535 (GIF's fields).
public final class AnimatedGIFEncoder: AnimationEncoder {
    private var writer: OpaquePointer?
    private var size: (width: Int, height: Int)?
    private let animated: Bool
    private var frames = 0

    /// `animated` false writes a still (no loop extension; one frame).
    public init(animated: Bool = true) { self.animated = animated }

    deinit { easel_gif_writer_free(writer) }

    /// Adds a frame; every frame must have the first one's size. The first frame's
    /// `loopCount` is the animation's.
    public func add(_ frame: AnimationFrame) throws {
        var message = [CChar](repeating: 0, count: Int(EASEL_GIF_MESSAGE_SIZE))
        guard animated || frames == 0 else { throw CodecError.invalidParameters("a still GIF has one frame") }
        if writer == nil {
            guard size == nil else { throw CodecError.invalidParameters("the GIF is finished") }
            guard frame.image.width <= 65_535, frame.image.height <= 65_535 else {
                throw CodecError.encodingFailed(format: .gif, reason: "a GIF is at most 65535 pixels a side")
            }
            // GIF's loop field counts repeats after the first play (0: forever); none: once.
            let repeats = frame.loopCount == 0 ? 0 : min(frame.loopCount - 1, 65_535)
            guard let created = easel_gif_writer_new(Int32(frame.image.width), Int32(frame.image.height), Int32(repeats),
                                                     animated && frame.loopCount != 1 ? 1 : 0, &message) else {
                throw CodecError.encodingFailed(format: .gif, reason: cMessage(&message))
            }
            writer = created
            size = (frame.image.width, frame.image.height)
        }
        guard let size, frame.image.width == size.width, frame.image.height == size.height else {
            throw CodecError.invalidParameters("animation frames differ in size")
        }
        var quantized = Quantizer.quantize(frame.image.converted(to: .rgba8))
        let delay = Int32(clamping: (max(frame.duration, 0) + 5) / 10)
        let colors = Int32(quantized.palette.count / 3), transparent = Int32(quantized.transparent ?? -1)
        // (giflib masks the indexes it is given in place: they are lent mutable.) Disposal 2:
        // cleared after showing.
        let ok = quantized.indexes.withUnsafeMutableBufferPointer { indexes in
            quantized.palette.withUnsafeBufferPointer { palette in
                easel_gif_writer_add(writer, indexes.baseAddress, palette.baseAddress, colors, transparent, delay, 2, &message)
            }
        }
        guard ok != 0 else { throw CodecError.encodingFailed(format: .gif, reason: cMessage(&message)) }
        frames += 1
    }

    /// The file (the encoder is done with).
    public func finish() throws -> Data {
        guard let writer else { throw CodecError.invalidParameters("a GIF needs at least one frame") }
        self.writer = nil
        var message = [CChar](repeating: 0, count: Int(EASEL_GIF_MESSAGE_SIZE))
        var output: UnsafeMutablePointer<UInt8>?
        var count = 0
        guard easel_gif_writer_finish(writer, &output, &count, &message) != 0, let output else {
            throw CodecError.encodingFailed(format: .gif, reason: cMessage(&message))
        }
        defer { free(output) }
        return Data(bytes: output, count: count)
    }

    /// A still GIF of `bitmap`.
    static func still(_ bitmap: Bitmap) throws -> Data {
        let encoder = AnimatedGIFEncoder(animated: false)
        try encoder.add(AnimationFrame(image: bitmap, duration: 0, loopCount: 0))
        return try encoder.finish()
    }
}

/// Colour quantization of one frame: a frame with no more colours than the palette holds keeps
/// them exactly (`exactPalette`); otherwise median cut: colours are counted in a 5-bit-a-channel
/// histogram (32,768 cells), the cells split into at most 255 boxes (the box with the widest
/// spread, weighted by its pixels, split at its median along that channel), each box's colour
/// the mean of its pixels' full 8-bit colours, and each pixel mapped through its cell's box.
enum Quantizer {
    struct Result {
        /// One palette index a pixel, row by row.
        var indexes: [UInt8]
        /// RGB triples (at most 256 colours, the transparent one included).
        var palette: [UInt8]
        /// The index of fully transparent pixels, if the frame has any.
        var transparent: Int?
        /// The pixels each colour stands for, by index (0 for the transparent one).
        var populations: [Int]
    }

    private struct Cell {
        var key: Int
        var count: Int
        var sum: (r: Int, g: Int, b: Int)
    }

    /// Quantizes an RGBA8 `bitmap` to at most `maxColors` visible colours (1…256), and the
    /// transparent one when the frame has transparent pixels (256 colours in all at most).
    static func quantize(_ bitmap: Bitmap, maxColors: Int = 256) -> Result {
        if let exact = exactPalette(bitmap, maxColors: maxColors) { return exact }
        var counted = histogram(bitmap)
        let capacity = counted.transparentPixels ? min(maxColors, 255) : maxColors
        let boxes = medianCut(&counted.cells, capacity: capacity)
        return result(boxes: boxes, cells: counted.cells, cellOf: counted.cellOf, transparentPixels: counted.transparentPixels)
    }

    /// A frame of few colours (an icon, a chart, a GIF's own frame, a small gradient: no more
    /// than the palette holds, the transparent one included) kept exactly: every visible colour
    /// its own entry, by first appearance; nil as soon as there are more. (The histogram's 5-bit
    /// cells would merge neighbouring shades: a 100-shade gradient came out in 32 bands.)
    private static func exactPalette(_ bitmap: Bitmap, maxColors: Int) -> Result? {
        let (width, height) = (bitmap.width, bitmap.height)
        var indexOf: [UInt32: UInt8] = [:]
        var palette: [UInt8] = [], populations: [Int] = []
        var indexes = [UInt8](repeating: 0, count: width * height)
        var clearPixels: [Int] = []
        var last: (color: UInt32, index: UInt8)? = nil
        let fits = bitmap.withUnsafeBytes { pixels -> Bool in
            for y in 0..<height {
                let row = y * bitmap.rowBytes
                for x in 0..<width {
                    let at = row + x * 4
                    guard pixels[at + 3] >= 128 else { clearPixels.append(y * width + x); continue }
                    let color = UInt32(pixels[at]) << 16 | UInt32(pixels[at + 1]) << 8 | UInt32(pixels[at + 2])
                    let index: UInt8
                    if let last, last.color == color {
                        index = last.index
                    } else if let known = indexOf[color] {
                        index = known
                    } else {
                        guard populations.count < min(maxColors, 256) else { return false }
                        index = UInt8(populations.count)
                        indexOf[color] = index
                        palette += [UInt8(color >> 16), UInt8(color >> 8 & 0xFF), UInt8(color & 0xFF)]
                        populations.append(0)
                    }
                    last = (color, index)
                    populations[Int(index)] += 1
                    indexes[y * width + x] = index
                }
            }
            return true
        }
        // The transparent pixels need an entry of their own besides the visible colours.
        guard fits, populations.count <= (clearPixels.isEmpty ? min(maxColors, 256) : min(maxColors, 255)) else { return nil }
        var transparent: Int?
        if !clearPixels.isEmpty {
            transparent = populations.count
            palette += [0, 0, 0]
            populations.append(0)
            for at in clearPixels { indexes[at] = UInt8(populations.count - 1) }
        }
        if palette.isEmpty { palette = [0, 0, 0]; populations = [0] }
        return Result(indexes: indexes, palette: palette, transparent: transparent, populations: populations)
    }

    /// The frame's colours counted in the 5-bit-a-channel histogram: the cells that hold some,
    /// in key order, each pixel's cell (`.max` for a pixel under half opacity), and whether the
    /// frame has such pixels.
    private static func histogram(_ bitmap: Bitmap) -> (cells: [Cell], cellOf: [UInt16], transparentPixels: Bool) {
        let (width, height) = (bitmap.width, bitmap.height)
        var counts = [Int](repeating: 0, count: 32768)
        var sums = [Int](repeating: 0, count: 32768 * 3)
        var cellOf = [UInt16](repeating: 0, count: width * height)
        var transparentPixels = false
        bitmap.withUnsafeBytes { pixels in
            for y in 0..<height {
                let row = y * bitmap.rowBytes
                for x in 0..<width {
                    let at = row + x * 4
                    guard pixels[at + 3] >= 128 else {
                        cellOf[y * width + x] = .max
                        transparentPixels = true
                        continue
                    }
                    let r = Int(pixels[at]), g = Int(pixels[at + 1]), b = Int(pixels[at + 2])
                    let key = (r >> 3) << 10 | (g >> 3) << 5 | (b >> 3)
                    counts[key] += 1
                    sums[key * 3] += r; sums[key * 3 + 1] += g; sums[key * 3 + 2] += b
                    cellOf[y * width + x] = UInt16(key)
                }
            }
        }
        var cells: [Cell] = []
        for key in 0..<32768 where counts[key] > 0 {
            cells.append(Cell(key: key, count: counts[key], sum: (sums[key * 3], sums[key * 3 + 1], sums[key * 3 + 2])))
        }
        return (cells, cellOf, transparentPixels)
    }

    /// Splits the cells into at most `capacity` boxes, each a range of `cells` (re-sorted along
    /// the channel it was split on): the box with the best score is split at its median by
    /// pixels until there are enough or none can be split.
    private static func medianCut(_ cells: inout [Cell], capacity: Int) -> [Range<Int>] {
        let boxes: [Range<Int>] = cells.isEmpty ? [] : [0..<cells.count]
        var queue = boxes.map { scored($0, in: cells) }
        while queue.count < capacity {
            guard let chosenIndex = queue.indices.max(by: { queue[$0].score < queue[$1].score }), queue[chosenIndex].score > 0 else { break }
            let (box, _, along) = queue[chosenIndex]
            cells[box].sort { channel($0, along) < channel($1, along) }
            // The median by pixels, leaving at least one cell on each side.
            let total = box.reduce(0) { $0 + cells[$1].count }
            var running = 0, split = box.lowerBound + 1
            for i in box {
                running += cells[i].count
                if running * 2 >= total { split = min(max(i + 1, box.lowerBound + 1), box.upperBound - 1); break }
            }
            queue[chosenIndex] = scored(box.lowerBound..<split, in: cells)
            queue.append(scored(split..<box.upperBound, in: cells))
        }
        return queue.map(\.box)
    }

    /// Channel `c` (0 red, 1 green, 2 blue) of a cell's key, 0…31.
    @inline(__always)
    private static func channel(_ cell: Cell, _ c: Int) -> Int { (cell.key >> (10 - 5 * c)) & 31 }

    /// The widest channel of a box's cells: its spread and which channel.
    private static func spread(_ box: Range<Int>, in cells: [Cell]) -> (width: Int, channel: Int) {
        var best = (width: 0, channel: 0)
        for c in 0..<3 {
            var low = 31, high = 0
            for i in box { let v = channel(cells[i], c); low = min(low, v); high = max(high, v) }
            if high - low > best.width { best = (high - low, c) }
        }
        return best
    }

    /// A box with its split score (its widest spread times the square root of its pixels) and
    /// channel, computed once when the box is made.
    private static func scored(_ box: Range<Int>, in cells: [Cell]) -> (box: Range<Int>, score: Double, channel: Int) {
        let s = spread(box, in: cells)
        guard box.count > 1, s.width > 0 else { return (box, 0, 0) }
        let pixels = box.reduce(0) { $0 + cells[$1].count }
        return (box, Double(s.width) * Double(pixels).squareRoot(), s.channel)
    }

    /// The palette of `boxes` (each box's mean colour, then black for the transparent index when
    /// the frame has transparent pixels), and each pixel's index through its cell's box.
    private static func result(boxes: [Range<Int>], cells: [Cell], cellOf: [UInt16], transparentPixels: Bool) -> Result {
        var palette: [UInt8] = []
        var populations: [Int] = []
        var indexOfCell = [UInt8](repeating: 0, count: 32768)
        for (index, box) in boxes.enumerated() {
            var count = 0, r = 0, g = 0, b = 0
            for i in box {
                count += cells[i].count; r += cells[i].sum.r; g += cells[i].sum.g; b += cells[i].sum.b
                indexOfCell[cells[i].key] = UInt8(index)
            }
            palette += [UInt8((r + count / 2) / count), UInt8((g + count / 2) / count), UInt8((b + count / 2) / count)]
            populations.append(count)
        }
        var transparent: Int?
        if transparentPixels {
            transparent = boxes.count
            palette += [0, 0, 0]
            populations.append(0)
        }
        if palette.isEmpty { palette = [0, 0, 0]; populations = [0] }
        let clear = UInt8(truncatingIfNeeded: transparent ?? 0)
        let indexes = cellOf.map { $0 == .max ? clear : indexOfCell[Int($0)] }
        return Result(indexes: indexes, palette: palette, transparent: transparent, populations: populations)
    }
}
