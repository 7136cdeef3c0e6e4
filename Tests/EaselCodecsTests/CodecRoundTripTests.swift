import EaselCodecs
import Foundation
import Testing

/// A smooth test picture: gradients that JPEG keeps well.
func gradient(width: Int, height: Int, format: Bitmap.PixelFormat = .rgba8, alpha: (Int, Int) -> UInt8 = { _, _ in 255 }) -> Bitmap {
    var bitmap = Bitmap(width: width, height: height, pixelFormat: format)
    let rowBytes = bitmap.rowBytes
    bitmap.withUnsafeMutableBytes { bytes in
        for y in 0..<height {
            for x in 0..<width {
                let r = UInt8(x * 255 / max(width - 1, 1))
                let g = UInt8(y * 255 / max(height - 1, 1))
                let b = UInt8((x + y) * 127 / max(width + height - 2, 1))
                if format == .gray8 {
                    bytes[y * rowBytes + x] = r / 2 + g / 2
                } else {
                    let o = y * rowBytes + x * 4
                    bytes[o] = r; bytes[o + 1] = g; bytes[o + 2] = b; bytes[o + 3] = alpha(x, y)
                }
            }
        }
    }
    return bitmap
}

/// Largest difference of any channel between two bitmaps of one size and format.
func maxDifference(_ a: Bitmap, _ b: Bitmap) -> Int {
    precondition(a.width == b.width && a.height == b.height && a.pixelFormat == b.pixelFormat)
    var worst = 0
    for y in 0..<a.height { for x in 0..<a.width {
        for (p, q) in zip(a.pixel(x: x, y: y), b.pixel(x: x, y: y)) { worst = max(worst, abs(Int(p) - Int(q))) }
    } }
    return worst
}

@Suite("Codec round trips")
struct CodecRoundTripTests {
    @Test(arguments: [Bitmap.PixelFormat.rgba8, .gray8])
    func pngRoundTripsExactly(format: Bitmap.PixelFormat) throws {
        let original = gradient(width: 37, height: 21, format: format) { x, _ in UInt8(x * 6) }
        let data = try ImageEncoder.encode(original, as: .png(compressionLevel: 9))
        let info = try ImageDecoder.info(of: data)
        #expect(info == ImageInfo(fileType: .png, width: 37, height: 21, hasAlpha: format == .rgba8,
                                  isGrayscale: format == .gray8, isProgressive: false))
        let decoded = try ImageDecoder.decode(data, pixelFormat: format)
        #expect(decoded.hasSamePixels(as: original))
    }

    @Test(arguments: [Bitmap.PixelFormat.rgba8, .gray8], [false, true])
    func jpegRoundTripsClosely(format: Bitmap.PixelFormat, progressive: Bool) throws {
        let original = gradient(width: 64, height: 48, format: format)
        let data = try ImageEncoder.encode(original, as: .jpeg(quality: 95, progressive: progressive))
        let info = try ImageDecoder.info(of: data)
        #expect(info.width == 64 && info.height == 48 && info.isProgressive == progressive)
        #expect(info.isGrayscale == (format == .gray8))
        let decoded = try ImageDecoder.decode(data, pixelFormat: format)
        #expect(maxDifference(decoded, original) <= 12)
    }

    @Test func jpegShrinksOnLoadToTheSmallestScaleCoveringTheRequest() throws {
        let data = try ImageEncoder.encode(gradient(width: 800, height: 600), as: .jpeg(quality: 80))
        #expect(try ImageDecoder.decode(data).width == 800)
        #expect(try ImageDecoder.decode(data, covering: (100, 75)).width == 100) // 1/8
        #expect(try ImageDecoder.decode(data, covering: (101, 75)).width == 200) // 1/4
        #expect(try ImageDecoder.decode(data, covering: (256, 256)).width == 400) // 1/2: 300 ≥ 256
        #expect(try ImageDecoder.decode(data, covering: (256, 301)).width == 800)
        let odd = try ImageEncoder.encode(gradient(width: 801, height: 601), as: .jpeg(quality: 80))
        let eighth = try ImageDecoder.decode(odd, covering: (100, 75))
        #expect(eighth.width == 101 && eighth.height == 76) // rounded up, never below the request
    }

    @Test func grayJpegDecodesToRGBAAndBack() throws {
        let data = try ImageEncoder.encode(gradient(width: 16, height: 16, format: .gray8), as: .jpeg(quality: 100))
        let rgba = try ImageDecoder.decode(data, pixelFormat: .rgba8)
        let pixel = rgba.pixel(x: 5, y: 9)
        #expect(pixel[0] == pixel[1] && pixel[1] == pixel[2] && pixel[3] == 255)
    }

    @Test func cmykJpegsDecodeToTheirRGBColours() throws {
        // Left half pure red (C 0, M 100 %, Y 100 %), right half 50 % gray (K 50 %).
        let data = try JPEGCodec.encodeCMYK(width: 32, height: 16, quality: 100) { x, _ in
            x < 16 ? (0, 255, 255, 0) : (0, 0, 0, 128)
        }
        let info = try ImageDecoder.info(of: data)
        #expect(info.width == 32 && !info.isGrayscale)
        let rgba = try ImageDecoder.decode(data)
        let red = rgba.pixel(x: 4, y: 8), gray = rgba.pixel(x: 27, y: 8)
        #expect(red[0] >= 245 && red[1] <= 10 && red[2] <= 10 && red[3] == 255)
        #expect(abs(Int(gray[0]) - 127) <= 6 && abs(Int(gray[1]) - 127) <= 6 && abs(Int(gray[2]) - 127) <= 6)
        let luma = try ImageDecoder.decode(data, pixelFormat: .gray8)
        #expect(abs(Int(luma.pixel(x: 27, y: 8)[0]) - 127) <= 6)
    }

    @Test func everyPNGColourTypeAndBitDepthDecodes() throws {
        // (colour type, bit depths, channels) as the PNG specification allows them.
        let cases: [(Int, [Int])] = [(0, [1, 2, 4, 8, 16]), (2, [8, 16]), (4, [8, 16]), (6, [8, 16])]
        for (colorType, depths) in cases {
            for depth in depths {
                for interlaced in [false, true] {
                    let maxValue = (1 << depth) - 1
                    let png = TestPNG.make(width: 9, height: 7, bitDepth: depth, colorType: colorType, interlaced: interlaced) { x, y in
                        let v = (x + y * 9) * maxValue / 62
                        // gray; gray+alpha; RGB; RGBA — alpha always opaque
                        return colorType == 4 ? [v, maxValue] : [v, maxValue - v, v / 2, maxValue]
                    }
                    let info = try ImageDecoder.info(of: png)
                    #expect(info.isProgressive == interlaced && info.width == 9 && info.height == 7)
                    let bitmap = try ImageDecoder.decode(png)
                    // The last pixel: v = maxValue, scaled to 8 bits.
                    let last = bitmap.pixel(x: 8, y: 6)
                    #expect(last[0] == 255, "colour type \(colorType) depth \(depth) interlaced \(interlaced): \(last)")
                    #expect(last[3] == 255)
                    let middle = bitmap.pixel(x: 4, y: 3) // v = 31 * maxValue / 62, scaled to 8 bits
                    let expected = (31 * maxValue / 62) * 255 / maxValue
                    #expect(abs(Int(middle[0]) - expected) <= 1, "colour type \(colorType) depth \(depth): \(middle) vs \(expected)")
                }
            }
        }
    }

    @Test func paletteWithTransparencyDecodesToRGBA() throws {
        let png = TestPNG.make(width: 2, height: 1, bitDepth: 8, colorType: 3,
                               palette: [[255, 0, 0], [0, 0, 255]], transparency: [128]) { x, _ in [x] }
        let info = try ImageDecoder.info(of: png)
        #expect(info.hasAlpha)
        let bitmap = try ImageDecoder.decode(png)
        #expect(bitmap.pixel(x: 0, y: 0) == [255, 0, 0, 128])
        #expect(bitmap.pixel(x: 1, y: 0) == [0, 0, 255, 255])
    }
}
