extension FaceDetector {
    /// The side, in pixels, of the blocks skin is judged on.
    static let skinBlock = 4

    /// Per block of `skinBlock` pixels of the analysis copy (row-major), whether its mean colour is
    /// skin-toned, and how many blocks have colour at all (`easel_face_prepare` fills them).
    struct SkinBlocks {
        /// The copy's size.
        var width: Int, height: Int
        /// Blocks across and down.
        var columns: Int { (width + skinBlock - 1) / skinBlock }
        var rows: Int { (height + skinBlock - 1) / skinBlock }
        /// 1 where the block is skin-toned.
        var skin: [UInt8]
        /// Blocks whose mean's channels are more than 24 levels apart.
        var coloured = 0

        init(width: Int, height: Int) {
            (self.width, self.height) = (width, height)
            skin = [UInt8](repeating: 0, count: max(1, ((width + skinBlock - 1) / skinBlock) * ((height + skinBlock - 1) / skinBlock)))
        }
    }

    /// Where faces from `smallestFace` to `largestFace` pixels may be in the analysis copy whose
    /// blocks `blocks` describes: the skin-toned parts of the image, each a box padded to hold a
    /// face it may belong to, in the copy's pixels. Nil — search everywhere — when the image has
    /// too little colour to tell (a gray or sepia photo: fewer than 2% of its blocks coloured),
    /// when skin covers most of it (over 60% once padded), or when it is in too many pieces.
    ///
    /// A block is skin-toned when its mean colour is, in YCbCr, Y above 40, Cb 77–127 and Cr
    /// 133–173 (a range that holds skin from light to dark under daylight and tungsten light);
    /// pieces of fewer blocks than a quarter of the smallest face are noise, not skin, and pieces
    /// more than three of the largest faces across and skin-toned over two thirds of their box are
    /// surfaces.
    static func skinRegions(_ blocks: SkinBlocks, smallestFace: Int, largestFace: Int) -> [Box]? {
        let block = skinBlock, columns = blocks.columns, rows = blocks.rows
        guard blocks.coloured * 50 >= columns * rows else { return nil }
        let faceBlocks = max(1, smallestFace / block)
        // A piece more than three of the largest faces across and skin-toned almost all over (two
        // thirds of its box or more) is a surface (sand, fur, wood, a wall), not small faces'
        // skin, which eyes, hair, mouths and clothes break up (a group's faces, necks and arms
        // make a large piece, but a patchy one, which is searched): the large-face pass looks at it.
        let largest = 3 * largestFace / block
        let found = pieces(of: blocks.skin.map { $0 != 0 }, columns: columns, rows: rows, smallest: max(2, faceBlocks * faceBlocks / 4))
            .filter { $0.box.width <= largest && $0.box.height <= largest || $0.count * 3 < $0.box.area * 2 }.map(\.box)
        guard found.count <= 256 else { return nil }
        let image = Box(x: 0, y: 0, width: blocks.width, height: blocks.height)
        var boxes = found.map { piece -> Box in
            // Padded by a face beside the skin (a face's skin may be a sliver: a beard, a shadow),
            // or half the piece's size when that is more, up to half the largest face looked for.
            let pad = max(smallestFace * 3 / 2, min(largestFace / 2, max(piece.width, piece.height) * block / 2))
            return clampBox(Box(x: piece.x * block - pad, y: piece.y * block - pad, width: piece.width * block + 2 * pad,
                                height: piece.height * block + 2 * pad), in: image)
        }
        boxes = merged(boxes)
        guard boxes.count <= 32, boxes.reduce(0, { $0 + $1.area }) * 5 <= blocks.width * blocks.height * 3 else { return nil }
        return boxes
    }

    /// `box` clamped inside `image` (at least 1×1).
    static func clampBox(_ box: Box, in image: Box) -> Box {
        let x = min(max(0, box.x), image.width - 1), y = min(max(0, box.y), image.height - 1)
        return Box(x: x, y: y, width: max(1, min(box.width, image.width - x)), height: max(1, min(box.height, image.height - y)))
    }

    /// The bounding boxes (in blocks) of the 4-connected pieces of `mask` with at least `smallest`
    /// blocks, and how many blocks each has.
    static func pieces(of mask: [Bool], columns: Int, rows: Int, smallest: Int) -> [(box: Box, count: Int)] {
        var seen = [Bool](repeating: false, count: mask.count)
        var boxes: [(box: Box, count: Int)] = []
        var stack: [Int] = []
        for start in mask.indices where mask[start] && !seen[start] {
            seen[start] = true
            stack.append(start)
            var (left, top, right, bottom, count) = (columns, rows, 0, 0, 0)
            while let index = stack.popLast() {
                let x = index % columns, y = index / columns
                (left, top, right, bottom, count) = (min(left, x), min(top, y), max(right, x), max(bottom, y), count + 1)
                for (nx, ny) in [(x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)] where nx >= 0 && ny >= 0 && nx < columns && ny < rows {
                    let next = ny * columns + nx
                    if mask[next], !seen[next] {
                        seen[next] = true
                        stack.append(next)
                    }
                }
            }
            if count >= smallest { boxes.append((Box(x: left, y: top, width: right - left + 1, height: bottom - top + 1), count)) }
        }
        return boxes
    }

    /// `boxes` with every two that overlap replaced by the box around both, until none overlap.
    static func merged(_ boxes: [Box]) -> [Box] {
        var result = boxes
        var changed = true
        while changed {
            changed = false
            outer: for i in result.indices {
                for j in result.indices where j > i {
                    let a = result[i], b = result[j]
                    guard a.x < b.x + b.width, b.x < a.x + a.width, a.y < b.y + b.height, b.y < a.y + a.height else { continue }
                    let x = min(a.x, b.x), y = min(a.y, b.y)
                    result[i] = Box(x: x, y: y, width: max(a.x + a.width, b.x + b.width) - x, height: max(a.y + a.height, b.y + b.height) - y)
                    result.remove(at: j)
                    changed = true
                    break outer
                }
            }
        }
        return result
    }
}
