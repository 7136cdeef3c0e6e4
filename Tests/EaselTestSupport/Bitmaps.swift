import EaselCodecs
import EaselSupport
import Foundation
import Testing

/// A bitmap filled by a function of (x, y) giving RGBA (the bytes given; fewer than four leave
/// the rest 0).
public func painted(width: Int, height: Int, _ color: (Int, Int) -> [UInt8]) -> Bitmap {
    var bitmap = Bitmap(width: width, height: height, pixelFormat: .rgba8)
    let rowBytes = bitmap.rowBytes
    bitmap.withUnsafeMutableBytes { bytes in
        for y in 0..<height { for x in 0..<width {
            for (c, value) in color(x, y).enumerated() { bytes[y * rowBytes + x * 4 + c] = value }
        } }
    }
    return bitmap
}

/// The same with RGB colours: opaque unless a fourth value (alpha) is given.
public func paintedOpaque(width: Int, height: Int, _ color: (Int, Int) -> [UInt8]) -> Bitmap {
    painted(width: width, height: height) { x, y in
        let value = color(x, y)
        return value.count >= 4 ? value : value + [255]
    }
}

/// A little-endian, uncompressed TIFF of `pages` pages, each `width`×`height` of 8-bit gray (1
/// sample), RGB (3) or RGB and a fourth sample (4) from `pixel`, in one strip. `extraSamples`:
/// the ExtraSamples tag's value for the samples past the colour ones (nil: no tag).
/// `stripBytes` makes the strip that long instead (shorter than the directory says: a damaged
/// file); `orientation` is the tag's value.
public func uncompressedTIFF(width: Int, height: Int, samples: Int = 3, pages: Int = 1, stripBytes: Int? = nil, orientation: Int = 1,
                             extraSamples: Int? = nil, _ pixel: (Int, Int) -> [UInt8] = { _, _ in [128, 128, 128, 255] }) -> Data {
    func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF)] }
    func le32(_ v: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> ($0 * 8)) } }
    func entry(_ tag: Int, _ type: Int, _ count: Int, _ value: Int) -> [UInt8] { le16(tag) + le16(type) + le32(count) + le32(value) }
    var strip: [UInt8]
    if let stripBytes {
        strip = [UInt8](repeating: 0x80, count: stripBytes)
    } else {
        strip = []
        strip.reserveCapacity(width * height * samples)
        for y in 0..<height { for x in 0..<width { strip += (pixel(x, y) + [255, 255, 255, 255]).prefix(samples) } }
    }
    if strip.count % 2 == 1 { strip.append(0) }
    var out: [UInt8] = [0x49, 0x49, 42, 0] + le32(8)
    let entries = extraSamples == nil ? 10 : 11, ifdSize = 2 + entries * 12 + 4
    // BitsPerSample of several samples is a list, stored after the strip.
    for page in 0..<pages {
        let ifdStart = out.count, stripAt = ifdStart + ifdSize, bitsAt = stripAt + strip.count
        let next = page + 1 < pages ? bitsAt + 2 * samples : 0
        out += le16(entries)
        out += entry(256, 4, 1, width) + entry(257, 4, 1, height)
        out += samples > 1 ? entry(258, 3, samples, bitsAt) : entry(258, 3, 1, 8)
        out += entry(259, 3, 1, 1) + entry(262, 3, 1, samples >= 3 ? 2 : 1) + entry(273, 4, 1, stripAt)
        out += entry(274, 3, 1, orientation) + entry(277, 3, 1, samples) + entry(278, 4, 1, height)
        out += entry(279, 4, 1, stripBytes ?? width * height * samples)
        if let extraSamples { out += entry(338, 3, 1, extraSamples) }
        out += le32(next)
        out += strip
        for _ in 0..<samples { out += le16(8) }
    }
    return Data(out)
}

/// A PDF of `objects` (numbered from 1 in order; the first is the catalog), laid out with a
/// correct cross-reference table. `trailer` adds entries to the trailer dictionary.
public func pdfFile(objects: [String], trailer: String = "") -> String {
    var out = "%PDF-1.4\n"
    var offsets: [Int] = []
    for (index, object) in objects.enumerated() {
        offsets.append(out.utf8.count)
        out += "\(index + 1) 0 obj\n\(object)\nendobj\n"
    }
    let xref = out.utf8.count
    out += "xref\n0 \(objects.count + 1)\n0000000000 65535 f \n" + offsets.map { String(format: "%010d 00000 n \n", $0) }.joined()
    return out + "trailer\n<< /Size \(objects.count + 1) /Root 1 0 R\(trailer) >>\nstartxref\n\(xref)\n%%EOF\n"
}

/// A two-page PDF: page 0 of 200×100 points, red; page 1 of 100×200, blue.
public func twoPagePDF() -> Data {
    func stream(_ content: String) -> String { "<< /Length \(content.utf8.count) >>\nstream\n\(content)\nendstream" }
    return Data(pdfFile(objects: [
        "<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [3 0 R 5 0 R] /Count 2 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 100] /Contents 4 0 R >>", stream("1 0 0 rg 0 0 200 100 re f"),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 100 200] /Contents 6 0 R >>", stream("0 0 1 rg 0 0 100 200 re f"),
    ]).utf8)
}

/// A one-page PDF of `width`×`height` points drawing `content`.
public func pdfDocument(width: Int, height: Int, content: String) -> String {
    pdfFile(objects: ["<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
                      "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 \(width) \(height)] /Contents 4 0 R >>",
                      "<< /Length \(content.utf8.count) >>\nstream\n\(content)\nendstream"])
}

/// A busy gray canvas of 1000 × 700 (deterministic noise) with the astronaut's head
/// (Samples/astronaut.jpg cut at 150,35–300,190: the face box at 26,30 of it, 95 × 95) at `face`,
/// and a louder distractor — 260 × 260 of saturated squares with hard edges — at `loud`.
public func faceCanvas(face: (Int, Int), loud: (Int, Int)) throws -> Bitmap {
    let photo = try ImageDecoder.decode(try Data(contentsOf: sampleURL("astronaut.jpg")))
    let head = try RegionCrop(.edges(left: 150, top: 35, right: 300, bottom: 190)).process(photo)
    var seed: UInt32 = 12345
    var noise = [UInt8](repeating: 0, count: 1000 * 700)
    for i in noise.indices {
        seed = seed &* 1_103_515_245 &+ 12345
        noise[i] = UInt8(80 + Int(seed >> 16) % 80)
    }
    let colours: [[UInt8]] = [[255, 0, 0, 255], [0, 220, 0, 255], [0, 0, 255, 255], [255, 230, 0, 255], [255, 0, 255, 255]]
    return painted(width: 1000, height: 700) { x, y in
        if (face.0..<face.0 + head.width).contains(x), (face.1..<face.1 + head.height).contains(y) {
            return head.pixel(x: x - face.0, y: y - face.1)
        }
        if (loud.0..<loud.0 + 260).contains(x), (loud.1..<loud.1 + 260).contains(y) {
            return colours[((x - loud.0) / 10 + (y - loud.1) / 10 * 3) % colours.count]
        }
        let v = noise[y * 1000 + x]
        return [v, v, v, 255]
    }
}

/// `data` with `count` bytes at `start` or later flipped (XORed with a non-zero byte), chosen by
/// `seed`: the same damage every run, so a failure names the seed that makes it again.
public func flippingBytes(of data: Data, seed: UInt64, from start: Int, count: Int = 4) -> Data {
    var generator = SplitMix64(seed: seed)
    var damaged = data
    for _ in 0..<count { damaged[Int.random(in: start..<damaged.count, using: &generator)] ^= UInt8.random(in: 1...255, using: &generator) }
    return damaged
}

/// `data` decoded, expected (as `label`) to be the size its header says and the same pixels when
/// decoded again; throws what decoding throws.
public func decodedConsistently(_ data: Data, _ label: String) throws -> Bitmap {
    let image = try ImageDecoder.decode(data)
    let info = try ImageDecoder.info(of: data)
    #expect(image.width == info.uprightWidth && image.height == info.uprightHeight,
            "\(label): \(image.width)×\(image.height) decoded, \(info.uprightWidth)×\(info.uprightHeight) in the header")
    #expect(try ImageDecoder.decode(data).hasSamePixels(as: image), "\(label): decoded twice, two images")
    return image
}

/// Opaque noise from a linear congruential generator started at `seed`: it does not compress,
/// so a file of it weighs what its pixels do.
public func noise(width: Int, height: Int, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) -> Bitmap {
    var state = seed
    return paintedOpaque(width: width, height: height) { _, _ in
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return [UInt8(truncatingIfNeeded: state >> 24), UInt8(truncatingIfNeeded: state >> 32), UInt8(truncatingIfNeeded: state >> 40)]
    }
}
