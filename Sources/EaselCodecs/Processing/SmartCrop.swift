import EaselSupport
import Foundation

/// Chooses where a crop window goes so that it keeps the interesting part of an image.
///
/// ```swift
/// let r = try SmartCrop.region(in: photo, width: 300, height: 300, strategy: .attention)
/// let square = try Crop(x: r.x, y: r.y, width: r.width, height: r.height).process(photo)
/// ```
///
/// The image is analysed on a grid of blocks of `factor × factor` pixels, `factor` chosen so
/// that the grid is at most 128 blocks on its long side. Every pixel is read once, at full
/// resolution, into its block's statistics, so fine detail (a one-pixel checkerboard) still
/// counts although the grid is coarse. The window slides over the grid in whole blocks (in
/// both directions when both of its sides are smaller than the image's); the best position is
/// then mapped back to pixels, placed as close to the centre as it can be while still covering
/// the blocks it was chosen for, and clamped inside the image.
///
/// The result depends only on the pixels: no randomness, no threads. Positions that score the
/// same (within 1e-9 for entropy, exactly for attention) go to the one nearest the centre; an
/// image where every position scores the same (a flat colour) gets the exactly centred window.
///
/// Alpha: RGBA colour is weighed by its alpha (as if composited over black), so transparent
/// pixels contribute no colour of their own.
public enum SmartCrop {
    /// What "interesting" means.
    public enum Strategy: String, Sendable, Hashable {
        /// Most edge, skin-tone and saturated-colour energy (after libvips' `attention`).
        case attention
        /// Most Shannon entropy of the luma histogram (32 bins).
        case entropy
        /// The faces (`FaceDetector`): the window that covers the most face area, the faces
        /// weighed by their size when they cannot all be kept, attention breaking ties; attention
        /// alone when there is no face (thumbor's `smart` with its face detector first).
        case face
    }

    /// The grid's long side, in blocks, at most.
    static let analysisSide = 128
    /// Luma histogram bins for `entropy` (8 levels each).
    static let entropyBins = 32

    // Attention weights, per block. Edge energy is in levels (0…255-ish): the block's luma
    // standard deviation (detail finer than a block) plus the absolute 4-neighbour Laplacian of
    // the block means (edges between blocks). Skin and saturation are scores 0…1, weighed so that
    // a skin-toned block counts like a strong edge and a saturated one like a moderate edge.
    static let edgeWeight = 1.0
    static let skinWeight = 192.0
    static let saturationWeight = 64.0

    /// The skin-tone direction in RGB (unit length): between light and dark skin tones.
    static let skinDirection: (Double, Double, Double) = {
        let r = 0.75, g = 0.53, b = 0.39
        let length = (r * r + g * g + b * b).squareRoot()
        return (r / length, g / length, b / length)
    }()
    /// Distance (between unit RGB vectors) from `skinDirection` at which the skin score reaches 0.
    static let skinRadius = 0.15
    /// Luma range (levels) in which a pixel can be skin.
    static let skinLuma = 50.0...245.0
    /// Saturation ((max − min) / max) below which a block scores nothing, and the luma range
    /// (levels) outside which it scores nothing (too dark or too bright to read as colour).
    static let saturationFloor = 0.3
    static let saturationLuma = 40.0...220.0

    /// Where to put a `width × height` window inside `bitmap`. The window is clamped to the
    /// image's size (and to at least one pixel); the returned rectangle always lies inside the
    /// image and has the (clamped) window's size.
    /// - Throws: `CodecError.libraryUnavailable` for `.face` when the face detector's plugin
    ///   cannot be loaded (a detection that fails otherwise places by attention).
    public static func region(in bitmap: Bitmap, width: Int, height: Int,
                              strategy: Strategy) throws(CodecError) -> (x: Int, y: Int, width: Int, height: Int) {
        let w = min(max(1, width), bitmap.width), h = min(max(1, height), bitmap.height)
        if w == bitmap.width, h == bitmap.height { return (0, 0, w, h) }
        let grid = Grid(imageWidth: bitmap.width, imageHeight: bitmap.height, windowWidth: w, windowHeight: h)
        let scores: [Double]
        let tolerance: Double
        switch strategy {
        case .attention:
            scores = attentionScores(bitmap, grid: grid)
            tolerance = 0 // sums of integers: exact
        case .entropy:
            scores = entropyScores(bitmap, grid: grid)
            tolerance = 1e-9
        case .face:
            let attention = attentionScores(bitmap, grid: grid)
            // Faces at the size the image asks for, whatever the window's.
            let faces: [FaceDetector.Box]
            do {
                faces = try FaceDetector.faces(in: bitmap)
            } catch let error as CodecError {
                if case .libraryUnavailable = error { throw error }
                faces = []
            } catch {
                faces = []
            }
            scores = faces.isEmpty ? attention : faceScores(faces, grid: grid, adding: attention)
            tolerance = faces.isEmpty ? 0 : 1e-6
        }
        let position = grid.choose(scores: scores, tolerance: tolerance)
        return (position.x, position.y, w, h)
    }

    /// The analysis grid and the window's placements on it.
    struct Grid {
        let imageWidth: Int, imageHeight: Int
        let windowWidth: Int, windowHeight: Int
        /// Pixels per block side.
        let factor: Int
        /// Blocks across and down (the last ones may be partial).
        let columns: Int, rows: Int
        /// Whole blocks the window spans (at least 1).
        let spanX: Int, spanY: Int
        /// Window placements across and down.
        let placementsX: Int, placementsY: Int

        init(imageWidth: Int, imageHeight: Int, windowWidth: Int, windowHeight: Int) {
            self.imageWidth = imageWidth
            self.imageHeight = imageHeight
            self.windowWidth = windowWidth
            self.windowHeight = windowHeight
            let longSide = max(imageWidth, imageHeight)
            factor = max(1, (longSide + SmartCrop.analysisSide - 1) / SmartCrop.analysisSide)
            columns = (imageWidth + factor - 1) / factor
            rows = (imageHeight + factor - 1) / factor
            // Rounded down, so that a window covering `span` blocks always fits the pixel window.
            spanX = max(1, windowWidth / factor)
            spanY = max(1, windowHeight / factor)
            placementsX = columns - spanX + 1
            placementsY = rows - spanY + 1
        }

        /// The pixel offsets at which a window of `size` still covers blocks
        /// `[block, block + span)` (clamped inside the image).
        static func range(block: Int, span: Int, factor: Int, size: Int, imageSize: Int) -> ClosedRange<Int> {
            let high = min(imageSize - size, block * factor)
            let low = min(high, max(0, min(imageSize, (block + span) * factor) - size))
            return low...high
        }

        /// The best-scoring placement, in pixels; ties go to the most central.
        /// Per placement (row-major), the sum of `blocks` (row-major, `columns × rows`) the window
        /// covers there: a summed-area table, (columns + 1) × (rows + 1), first row and column zero.
        func windowSums<T: AdditiveArithmetic>(_ blocks: [T]) -> [T] {
            let stride = columns + 1
            var table = [T](repeating: .zero, count: stride * (rows + 1))
            for y in 0..<rows {
                var running = T.zero
                for x in 0..<columns {
                    running += blocks[y * columns + x]
                    table[(y + 1) * stride + x + 1] = table[y * stride + x + 1] + running
                }
            }
            var sums = [T](repeating: .zero, count: placementsX * placementsY)
            for py in 0..<placementsY {
                let top = py * stride, bottom = (py + spanY) * stride
                for px in 0..<placementsX {
                    let left = px, right = px + spanX
                    sums[py * placementsX + px] = table[bottom + right] - table[top + right] - table[bottom + left] + table[top + left]
                }
            }
            return sums
        }

        func choose(scores: [Double], tolerance: Double) -> (x: Int, y: Int) {
            let centreX = (imageWidth - windowWidth) / 2, centreY = (imageHeight - windowHeight) / 2
            guard let maximum = scores.max(), let minimum = scores.min(), maximum - minimum > tolerance else {
                return (centreX, centreY)
            }
            let xs = (0..<placementsX).map { block in
                Self.range(block: block, span: spanX, factor: factor, size: windowWidth, imageSize: imageWidth)
            }
            var best = (x: centreX, y: centreY), bestDistance = Int.max
            for py in 0..<placementsY {
                let rangeY = Self.range(block: py, span: spanY, factor: factor, size: windowHeight, imageSize: imageHeight)
                let y = min(max(centreY, rangeY.lowerBound), rangeY.upperBound)
                let dy = y - centreY
                for px in 0..<placementsX where scores[py * placementsX + px] >= maximum - tolerance {
                    let x = min(max(centreX, xs[px].lowerBound), xs[px].upperBound)
                    let dx = x - centreX
                    let distance = dx * dx + dy * dy
                    if distance < bestDistance {
                        best = (x, y)
                        bestDistance = distance
                    }
                }
            }
            return best
        }
    }

    // MARK: - Faces

    /// One score per placement (row-major): the face area (pixels inside any face box) the
    /// window covers, weighed far over the placement's attention score (scaled to 0…1), which
    /// breaks ties.
    static func faceScores(_ faces: [FaceDetector.Box], grid: Grid, adding attention: [Double]) -> [Double] {
        let columns = grid.columns, rows = grid.rows
        var area = [Double](repeating: 0, count: columns * rows)
        for face in faces {
            let firstColumn = face.x / grid.factor, lastColumn = min(columns - 1, (face.x + face.width - 1) / grid.factor)
            let firstRow = face.y / grid.factor, lastRow = min(rows - 1, (face.y + face.height - 1) / grid.factor)
            guard firstColumn <= lastColumn, firstRow <= lastRow else { continue }
            for row in firstRow...lastRow {
                let top = max(face.y, row * grid.factor), bottom = min(face.y + face.height, (row + 1) * grid.factor)
                for column in firstColumn...lastColumn {
                    let left = max(face.x, column * grid.factor), right = min(face.x + face.width, (column + 1) * grid.factor)
                    area[row * columns + column] += Double(max(0, right - left) * max(0, bottom - top))
                }
            }
        }
        let most = max(1e-9, attention.max() ?? 1)
        return zip(grid.windowSums(area), attention).map { covered, attention in covered * 1000 + attention / most }
    }

    // MARK: - Attention

    /// Per-block sums gathered from full-resolution pixels.
    private struct BlockSums {
        var red = 0, green = 0, blue = 0, luma = 0, lumaSquared = 0
    }

    /// One score per placement (row-major): the window's summed attention energy.
    static func attentionScores(_ bitmap: Bitmap, grid: Grid) -> [Double] {
        grid.windowSums(attentionEnergy(bitmap, grid: grid)).map(Double.init)
    }

    /// Integer energy per block (row-major, `columns × rows`).
    static func attentionEnergy(_ bitmap: Bitmap, grid: Grid) -> [Int] {
        let columns = grid.columns, rows = grid.rows, factor = grid.factor
        let width = bitmap.width, height = bitmap.height, rowBytes = bitmap.rowBytes
        let isGray = bitmap.pixelFormat == .gray8, opaque = bitmap.isKnownOpaque
        var meanLuma = [Double](repeating: 0, count: columns * rows)
        var local = [Double](repeating: 0, count: columns * rows) // detail + skin + saturation
        var sums = [BlockSums](repeating: BlockSums(), count: columns)
        bitmap.withUnsafeBytes { raw in
            let base = raw.baseAddress!
            for by in 0..<rows {
                for bx in 0..<columns { sums[bx] = BlockSums() }
                let y0 = by * factor, y1 = min(height, y0 + factor)
                for y in y0..<y1 {
                    let row = base + y * rowBytes
                    for bx in 0..<columns {
                        let x0 = bx * factor, x1 = min(width, x0 + factor)
                        var r = 0, g = 0, b = 0, l = 0, ll = 0
                        if isGray {
                            for x in x0..<x1 {
                                let v = Int(row.load(fromByteOffset: x, as: UInt8.self))
                                l += v
                                ll += v * v
                            }
                            r = l; g = l; b = l
                        } else {
                            for x in x0..<x1 {
                                let p = row.loadUnaligned(fromByteOffset: x * 4, as: UInt32.self)
                                var pr = Int(p & 0xFF), pg = Int((p >> 8) & 0xFF), pb = Int((p >> 16) & 0xFF)
                                if !opaque {
                                    let a = Int(p >> 24)
                                    if a != 255 {
                                        pr = (pr * a + 127) / 255
                                        pg = (pg * a + 127) / 255
                                        pb = (pb * a + 127) / 255
                                    }
                                }
                                let pl = (pr * 77 + pg * 150 + pb * 29 + 128) >> 8
                                r += pr; g += pg; b += pb
                                l += pl
                                ll += pl * pl
                            }
                        }
                        sums[bx].red += r
                        sums[bx].green += g
                        sums[bx].blue += b
                        sums[bx].luma += l
                        sums[bx].lumaSquared += ll
                    }
                }
                for bx in 0..<columns {
                    let x0 = bx * factor, x1 = min(width, x0 + factor)
                    let count = Double((x1 - x0) * (y1 - y0))
                    let s = sums[bx]
                    let mean = Double(s.luma) / count
                    let variance = max(0, Double(s.lumaSquared) / count - mean * mean)
                    let red = Double(s.red) / count, green = Double(s.green) / count, blue = Double(s.blue) / count
                    meanLuma[by * columns + bx] = mean
                    local[by * columns + bx] = edgeWeight * variance.squareRoot()
                        + skinWeight * skinScore(red: red, green: green, blue: blue, luma: mean)
                        + saturationWeight * saturationScore(red: red, green: green, blue: blue, luma: mean)
                }
            }
        }
        var energy = [Int](repeating: 0, count: columns * rows)
        for y in 0..<rows {
            let up = max(0, y - 1) * columns, here = y * columns, down = min(rows - 1, y + 1) * columns
            for x in 0..<columns {
                let left = max(0, x - 1), right = min(columns - 1, x + 1)
                let laplacian = 4 * meanLuma[here + x] - meanLuma[here + left] - meanLuma[here + right]
                    - meanLuma[up + x] - meanLuma[down + x]
                energy[here + x] = Int(checked: (edgeWeight * abs(laplacian) + local[here + x]).rounded())
            }
        }
        return energy
    }

    /// 0…1: how close the colour's direction is to skin tone, within the skin luma range.
    static func skinScore(red: Double, green: Double, blue: Double, luma: Double) -> Double {
        guard skinLuma.contains(luma) else { return 0 }
        let length = (red * red + green * green + blue * blue).squareRoot()
        guard length > 0 else { return 0 }
        let dr = red / length - skinDirection.0, dg = green / length - skinDirection.1, db = blue / length - skinDirection.2
        let distance = (dr * dr + dg * dg + db * db).squareRoot()
        return max(0, 1 - distance / skinRadius)
    }

    /// 0…1: saturation above `saturationFloor`, rescaled, within the saturation luma range.
    static func saturationScore(red: Double, green: Double, blue: Double, luma: Double) -> Double {
        guard saturationLuma.contains(luma) else { return 0 }
        let high = max(red, green, blue), low = min(red, green, blue)
        guard high > 0 else { return 0 }
        let saturation = (high - low) / high
        return max(0, (saturation - saturationFloor) / (1 - saturationFloor))
    }

    // MARK: - Entropy

    /// One score per placement (row-major): the entropy, in bits, of the window's luma histogram.
    static func entropyScores(_ bitmap: Bitmap, grid: Grid) -> [Double] {
        let columns = grid.columns, rows = grid.rows, factor = grid.factor, bins = entropyBins
        let width = bitmap.width, height = bitmap.height, rowBytes = bitmap.rowBytes
        let isGray = bitmap.pixelFormat == .gray8, opaque = bitmap.isKnownOpaque
        // Integral histograms: entry (by, bx) holds the histogram of blocks [0, by) × [0, bx).
        // Counts never exceed the pixel count, which is far below 2³² for any bitmap in memory.
        let stride = (columns + 1) * bins
        var integral = [UInt32](repeating: 0, count: stride * (rows + 1))
        var blockRow = [UInt32](repeating: 0, count: columns * bins)
        var running = [UInt32](repeating: 0, count: bins)
        bitmap.withUnsafeBytes { raw in
            let base = raw.baseAddress!
            integral.withUnsafeMutableBufferPointer { integral in
                blockRow.withUnsafeMutableBufferPointer { blockRow in
                    for by in 0..<rows {
                        blockRow.update(repeating: 0)
                        let y0 = by * factor, y1 = min(height, y0 + factor)
                        for y in y0..<y1 {
                            let row = base + y * rowBytes
                            for bx in 0..<columns {
                                let histogram = bx * bins
                                let x0 = bx * factor, x1 = min(width, x0 + factor)
                                if isGray {
                                    for x in x0..<x1 {
                                        blockRow[histogram + (Int(row.load(fromByteOffset: x, as: UInt8.self)) >> 3)] += 1
                                    }
                                } else {
                                    for x in x0..<x1 {
                                        let p = row.loadUnaligned(fromByteOffset: x * 4, as: UInt32.self)
                                        var r = Int(p & 0xFF), g = Int((p >> 8) & 0xFF), b = Int((p >> 16) & 0xFF)
                                        if !opaque {
                                            let a = Int(p >> 24)
                                            if a != 255 {
                                                r = (r * a + 127) / 255
                                                g = (g * a + 127) / 255
                                                b = (b * a + 127) / 255
                                            }
                                        }
                                        let luma = (r * 77 + g * 150 + b * 29 + 128) >> 8
                                        blockRow[histogram + (luma >> 3)] += 1
                                    }
                                }
                            }
                        }
                        for k in 0..<bins { running[k] = 0 }
                        let above = by * stride, here = (by + 1) * stride
                        for bx in 0..<columns {
                            for k in 0..<bins {
                                running[k] &+= blockRow[bx * bins + k]
                                integral[here + (bx + 1) * bins + k] = integral[above + (bx + 1) * bins + k] &+ running[k]
                            }
                        }
                    }
                }
            }
        }
        var scores = [Double](repeating: 0, count: grid.placementsX * grid.placementsY)
        integral.withUnsafeBufferPointer { integral in
            for py in 0..<grid.placementsY {
                let top = py * stride, bottom = (py + grid.spanY) * stride
                for px in 0..<grid.placementsX {
                    let left = px * bins, right = (px + grid.spanX) * bins
                    var total = 0
                    var weighted = 0.0 // Σ count · log2(count)
                    for k in 0..<bins {
                        let count = Int(integral[bottom + right + k]) - Int(integral[top + right + k])
                            - Int(integral[bottom + left + k]) + Int(integral[top + left + k])
                        guard count > 0 else { continue }
                        total += count
                        let c = Double(count)
                        weighted += c * log2(c)
                    }
                    scores[py * grid.placementsX + px] = total > 0 ? log2(Double(total)) - weighted / Double(total) : 0
                }
            }
        }
        return scores
    }
}
