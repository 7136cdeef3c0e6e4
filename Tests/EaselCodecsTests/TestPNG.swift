import EaselTestSupport
import Foundation

/// Writes PNG files byte by byte (stored deflate blocks, optional Adam7 interlacing), so the
/// tests can make every colour type and bit depth without any image library.
enum TestPNG {
    /// - Parameters:
    ///   - colorType: 0 gray, 2 RGB, 3 palette, 4 gray+alpha, 6 RGBA.
    ///   - samples: one array of channel values per pixel, row-major (palette: the index).
    static func make(width: Int, height: Int, bitDepth: Int, colorType: Int, interlaced: Bool = false,
                     palette: [[UInt8]] = [], transparency: [UInt8]? = nil, iccProfile: Data? = nil,
                     samples: (Int, Int) -> [Int]) -> Data {
        var png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        var ihdr = Data()
        ihdr.append(be32(width)); ihdr.append(be32(height))
        ihdr.append(contentsOf: [UInt8(bitDepth), UInt8(colorType), 0, 0, interlaced ? 1 : 0])
        png.append(chunk("IHDR", ihdr))
        if let iccProfile { png.append(chunk("iCCP", Data("ICC\0".utf8) + Data([0]) + zlibStored(iccProfile))) }
        if colorType == 3 { png.append(chunk("PLTE", Data(palette.flatMap { $0 }))) }
        if let transparency { png.append(chunk("tRNS", Data(transparency))) }
        let channels = [0: 1, 2: 3, 3: 1, 4: 2, 6: 4][colorType]!
        var raw = Data()
        let passes: [(Int, Int, Int, Int)] = interlaced
            ? [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]
            : [(0, 0, 1, 1)]
        for (x0, y0, dx, dy) in passes {
            let xs = Array(stride(from: x0, to: width, by: dx)), ys = Array(stride(from: y0, to: height, by: dy))
            guard !xs.isEmpty, !ys.isEmpty else { continue }
            for y in ys {
                raw.append(0) // filter: none
                var bits = BitWriter()
                for x in xs { for value in samples(x, y).prefix(channels) { bits.write(value, bits: bitDepth) } }
                raw.append(bits.finish())
            }
        }
        png.append(chunk("IDAT", zlibStored(raw)))
        png.append(chunk("IEND", Data()))
        return png
    }

    struct BitWriter {
        var bytes = Data()
        var current = 0
        var used = 0
        mutating func write(_ value: Int, bits: Int) {
            if bits == 16 { bytes.append(UInt8(value >> 8)); bytes.append(UInt8(value & 0xFF)); return }
            if bits == 8 { bytes.append(UInt8(value)); return }
            current = (current << bits) | (value & ((1 << bits) - 1))
            used += bits
            if used == 8 { bytes.append(UInt8(current)); current = 0; used = 0 }
        }
        mutating func finish() -> Data {
            if used > 0 { bytes.append(UInt8(current << (8 - used))); current = 0; used = 0 }
            return bytes
        }
    }

    static func be32(_ value: Int) -> Data { Data([UInt8(value >> 24 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]) }

    static func chunk(_ type: String, _ body: Data) -> Data {
        var data = be32(body.count)
        let typed = Data(type.utf8) + body
        data.append(typed)
        data.append(be32(Int(crc32(typed))))
        return data
    }

    static func crc32(_ data: Data) -> UInt32 { EaselTestSupport.crc32(data) }

    static func zlibStored(_ raw: Data) -> Data {
        var out = Data([0x78, 0x01])
        var offset = 0
        repeat {
            let count = min(65_535, raw.count - offset)
            let last: UInt8 = offset + count >= raw.count ? 1 : 0
            out.append(last)
            out.append(contentsOf: [UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)])
            out.append(raw[raw.startIndex + offset ..< raw.startIndex + offset + count])
            offset += count
        } while offset < raw.count
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in raw { a = (a + UInt32(byte)) % 65_521; b = (b + a) % 65_521 }
        out.append(be32(Int(b << 16 | a)))
        return out
    }
}
