@testable import EaselCodecs
import EaselTestSupport
import Foundation
import Testing

/// Colour management: embedded profiles converted to sRGB with Little CMS, with real profiles
/// (Display P3 made by Little CMS, Debian's Adobe RGB-compatible profile from icc-profiles-free).
@Suite struct ColorTests {
    static let adobeRGB = ICCProfile(data: try! Data(contentsOf: URL(fileURLWithPath: "/usr/share/color/icc/compatibleWithAdobeRGB1998.icc")))!
    static let displayP3 = ICCProfile.displayP3!

    /// A colourful image (saturated hues, a gray ramp, skin-like tones): all inside sRGB, so
    /// sRGB → wide gamut → sRGB loses nothing but rounding.
    static let original: Bitmap = {
        var bitmap = Bitmap(width: 96, height: 64, pixelFormat: .rgba8)
        let rowBytes = bitmap.rowBytes
        bitmap.withUnsafeMutableBytes { bytes in
            for y in 0..<64 { for x in 0..<96 {
                let o = y * rowBytes + x * 4
                let band = y / 16
                let t = Double(x) / 95
                let rgb: (Double, Double, Double) = switch band {
                case 0: (1 - t, t, 0.2)                 // red to green
                case 1: (0.1, 1 - t, t)                 // green to blue
                case 2: (t, t, t)                       // gray ramp
                default: (0.9 - 0.3 * t, 0.7 - 0.3 * t, 0.55 - 0.3 * t)  // skin tones
                }
                bytes[o] = UInt8(rgb.0 * 255); bytes[o + 1] = UInt8(rgb.1 * 255); bytes[o + 2] = UInt8(rgb.2 * 255); bytes[o + 3] = 255
            } }
        }
        return bitmap
    }()

    static func meanError(_ a: Bitmap, _ b: Bitmap) -> Double {
        #expect(a.width == b.width && a.height == b.height)
        var total = 0, count = 0
        for y in 0..<a.height { for x in 0..<a.width {
            let p = a.pixel(x: x, y: y), q = b.pixel(x: x, y: y)
            for c in 0..<3 { total += abs(Int(p[c]) - Int(q[c])); count += 1 }
        } }
        return Double(total) / Double(count)
    }

    @Test(arguments: ["Display P3", "Adobe RGB"])
    func wideGamutJPEGsAndPNGsComeOutWithin2LevelsOfTheSRGBOriginal(_ name: String) throws {
        let profile = name == "Display P3" ? Self.displayP3 : Self.adobeRGB
        #expect(profile.colorSpace == .rgb && !profile.isSRGB)
        let wide = try #require(ColorConverter.convert(Self.original, from: nil, to: profile))
        // JPEG: against the sRGB original saved the same way (so only colour counts).
        let reference = try ImageDecoder.decode(try ImageEncoder.encode(Self.original, as: .jpeg(quality: 95)))
        let jpeg = try ImageEncoder.encode(wide, as: .jpeg(quality: 95), iccProfile: profile.data)
        let info = try ImageDecoder.info(of: jpeg)
        #expect(info.colorProfile.profile?.description == profile.description)
        let converted = try ImageDecoder.decode(jpeg)
        #expect(Self.meanError(converted, reference) <= 2)
        // Untouched, the wide-gamut pixels are far off (what browsers showed before): the test
        // measures the conversion.
        let kept = try ImageDecoder.decode(jpeg, color: .keepSourceProfile)
        #expect(Self.meanError(kept, reference) > 5)
        // PNG (lossless): against the original itself.
        let png = try ImageEncoder.encode(wide, as: .png(), iccProfile: profile.data)
        #expect(try ImageDecoder.info(of: png).colorProfile.profile?.data == profile.data)
        #expect(Self.meanError(try ImageDecoder.decode(png), Self.original) <= 1)
        // Shrunk while decoding (a JPEG at 1/2): converted too.
        let big = try ImageEncoder.encode(try #require(ColorConverter.convert(gradient(width: 400, height: 300), from: nil, to: profile)),
                                          as: .jpeg(quality: 95), iccProfile: profile.data)
        let half = try ImageDecoder.decode(big, covering: (200, 150))
        let halfReference = try ImageDecoder.decode(try ImageEncoder.encode(gradient(width: 400, height: 300), as: .jpeg(quality: 95)),
                                                    covering: (200, 150))
        #expect(half.width == 200 && Self.meanError(half, halfReference) <= 2)
    }

    /// RGB matrix/TRC profiles to sRGB take a table-driven path: within one level of Little
    /// CMS's own transform on every pixel, over all 2^24 colours sampled.
    @Test(arguments: ["Display P3", "Adobe RGB"])
    func theMatrixShaperPathMatchesLittleCMS(_ name: String) throws {
        let profile = name == "Display P3" ? Self.displayP3 : Self.adobeRGB
        var bitmap = Bitmap(width: 256, height: 256, pixelFormat: .rgba8)
        let rowBytes = bitmap.rowBytes
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        bitmap.withUnsafeMutableBytes { bytes in
            for y in 0..<256 { for x in 0..<256 {
                state = state &* 6364136223846793005 &+ 1442695040888963407
                let o = y * rowBytes + x * 4
                // Every level of each channel appears (x, y), the third varies pseudo-randomly; alpha kept.
                bytes[o] = UInt8(x); bytes[o + 1] = UInt8(y); bytes[o + 2] = UInt8(truncatingIfNeeded: state >> 33); bytes[o + 3] = UInt8(x ^ y)
            } }
        }
        var fast = bitmap
        #expect(ColorConverter.convertToSRGB(&fast, from: profile))
        let reference = try #require(ColorConverter.convertWithLittleCMS(bitmap, from: profile))
        var worst = 0
        for y in 0..<256 { for x in 0..<256 {
            let a = fast.pixel(x: x, y: y), b = reference.pixel(x: x, y: y)
            for c in 0..<3 { worst = max(worst, abs(Int(a[c]) - Int(b[c]))) }
            #expect(a[3] == bitmap.pixel(x: x, y: y)[3])
        } }
        #expect(worst <= 1, "largest difference \(worst) levels")
    }

    @Test func a16BitPNGWithAProfileIsConverted() throws {
        let wide = try #require(ColorConverter.convert(Self.original, from: nil, to: Self.displayP3))
        let png = TestPNG.make(width: 96, height: 64, bitDepth: 16, colorType: 2, iccProfile: Self.displayP3.data) { x, y in
            wide.pixel(x: x, y: y).prefix(3).map { Int($0) * 257 }
        }
        let info = try ImageDecoder.info(of: png)
        #expect(info.bitDepth == 16 && info.colorProfile.profile?.description == "Display P3")
        #expect(Self.meanError(try ImageDecoder.decode(png), Self.original) <= 1)
    }

    @Test func aWebPWithAnICCPChunkIsConverted() throws {
        let wide = try #require(ColorConverter.convert(Self.original, from: nil, to: Self.displayP3))
        let webp = try ImageEncoder.encode(wide, as: .webp(quality: 100, lossless: true))
        // An extended WebP with an ICCP chunk, as libwebpmux writes it: VP8X (ICC flag) + ICCP + the image.
        let withProfile = Self.webpWithICCP(webp, profile: Self.displayP3.data, width: 96, height: 64)
        #expect(try ImageDecoder.info(of: withProfile).colorProfile.profile?.description == "Display P3")
        #expect(Self.meanError(try ImageDecoder.decode(withProfile), Self.original) <= 1)
    }

    static func webpWithICCP(_ simple: Data, profile: Data, width: Int, height: Int) -> Data {
        func le32(_ v: Int) -> [UInt8] { [UInt8(v & 255), UInt8(v >> 8 & 255), UInt8(v >> 16 & 255), UInt8(v >> 24 & 255)] }
        func le24(_ v: Int) -> [UInt8] { [UInt8(v & 255), UInt8(v >> 8 & 255), UInt8(v >> 16 & 255)] }
        var body: [UInt8] = Array("WEBP".utf8)
        body += Array("VP8X".utf8) + le32(10) + [0x20, 0, 0, 0] + le24(width - 1) + le24(height - 1)
        body += Array("ICCP".utf8) + le32(profile.count) + Array(profile) + (profile.count % 2 == 1 ? [0] : [])
        body += Array(simple[12...])  // the VP8/VP8L chunk of the simple file
        return Data(Array("RIFF".utf8) + le32(body.count) + body)
    }

    @Test func grayProfilesApplyToGrayImages() throws {
        let gray = try #require(ICCProfile(data: try Data(contentsOf: URL(fileURLWithPath: "/usr/share/color/icc/Gray.icc"))))
        #expect(gray.colorSpace == .gray)
        let ramp = gradient(width: 64, height: 16, format: .gray8)
        let jpeg = try ImageEncoder.encode(ramp, as: .jpeg(quality: 95), iccProfile: gray.data)
        let decoded = try ImageDecoder.decode(jpeg)
        let kept = try ImageDecoder.decode(jpeg, color: .keepSourceProfile)
        // Still gray, and converted through the profile's tone curve (its gamma differs from sRGB's).
        for x in stride(from: 0, to: 64, by: 7) {
            let p = decoded.pixel(x: x, y: 8)
            #expect(p[0] == p[1] && p[1] == p[2])
        }
        #expect(Self.meanError(decoded, kept) > 0.5)
        let grayOut = try ImageDecoder.decode(jpeg, pixelFormat: .gray8)
        #expect(grayOut.pixelFormat == .gray8)
    }

    /// CMYK JPEGs as Adobe applications write them (inverted YCCK), with a CMYK profile whose
    /// table is the naive formula squared, and without any profile.
    @Test func cmykJPEGsFollowTheirProfileAndTheNaiveFormulaWithout() throws {
        let profile = try #require(ICCProfile.testCMYK(gamma: 2))
        #expect(profile.colorSpace == .cmyk)
        let patches: [(c: UInt8, m: UInt8, y: UInt8, k: UInt8)] = [(0, 0, 0, 0), (255, 0, 0, 0), (0, 128, 255, 0), (0, 0, 0, 128), (60, 30, 10, 20)]
        func pixel(_ x: Int, _ y: Int) -> (c: UInt8, m: UInt8, y: UInt8, k: UInt8) { patches[min(x / 16, 4)] }
        let plain = try JPEGCodec.encodeCMYK(width: 80, height: 16, quality: 100, pixel: pixel)
        let tagged = try JPEGCodec.encodeCMYK(width: 80, height: 16, quality: 100, iccProfile: profile.data, pixel: pixel)
        let naive = try ImageDecoder.decode(plain), managed = try ImageDecoder.decode(tagged)
        for (index, patch) in patches.enumerated() {
            let k = 1 - Double(patch.k) / 255
            let expected = [patch.c, patch.m, patch.y].map { (1 - Double($0) / 255) * k * 255 }
            let a = naive.pixel(x: index * 16 + 8, y: 8), b = managed.pixel(x: index * 16 + 8, y: 8)
            for c in 0..<3 {
                #expect(abs(Double(a[c]) - expected[c]) <= 4, "naive patch \(index) channel \(c): \(a[c]) vs \(expected[c])")
                #expect(abs(Double(b[c]) - 255 * pow(expected[c] / 255, 2)) <= 6, "profile patch \(index) channel \(c): \(b[c])")
            }
            #expect(a[3] == 255 && b[3] == 255)
        }
    }

    @Test func damagedProfilesAreIgnoredAndOversizedOnesRefused() throws {
        let good = try ImageEncoder.encode(Self.original, as: .jpeg(quality: 90))
        let expected = try ImageDecoder.decode(good)
        // Garbage where a profile should be: a log line, and the pixels as sRGB.
        let garbage = try ImageEncoder.encode(Self.original, as: .jpeg(quality: 90), iccProfile: Data((0..<300).map { UInt8($0 & 0xFF) }))
        guard case .damaged = try ImageDecoder.info(of: garbage).colorProfile else { Issue.record("garbage profile not damaged"); return }
        #expect(Self.meanError(try ImageDecoder.decode(garbage), expected) == 0)
        // A profile whose chunk count promises a second chunk that never comes.
        var missing = try ImageEncoder.encode(Self.original, as: .jpeg(quality: 90), iccProfile: Self.displayP3.data)
        let marker = try #require(missing.range(of: Data("ICC_PROFILE\0".utf8)))
        missing[marker.upperBound + 1] = 2  // count: 2
        guard case .damaged(let reason) = try ImageDecoder.info(of: missing).colorProfile else { Issue.record("missing chunk not seen"); return }
        #expect(reason.contains("missing"))
        _ = try ImageDecoder.decode(missing)
        // Over the limit: refused as a limit, before decoding.
        let tagged = try ImageEncoder.encode(Self.original, as: .jpeg(quality: 90), iccProfile: Self.adobeRGB.data)
        let limits = configured(DecodingLimits()) { $0.maxProfileBytes = 100 }
        #expect(throws: CodecError.profileTooLarge(bytes: Self.adobeRGB.data.count, limit: 100)) {
            try ImageDecoder.decode(tagged, limits: limits)
        }
    }

    @Test func profilesInSeveralChunksAreReassembledInTheirOrder() throws {
        // A real 500 KB profile (a CMYK table of 17^4 points): libjpeg writes it in 8 APP2 chunks.
        let large = try #require(ICCProfile.testCMYK(gamma: 1.8, gridPoints: 17))
        #expect(large.data.count > 400_000)
        let jpeg = try ImageEncoder.encode(Self.original, as: .jpeg(quality: 90), iccProfile: large.data)
        let chunks = jpeg.ranges(of: Data("ICC_PROFILE\0".utf8))
        #expect(chunks.count == 8)
        #expect(ICCProfileReader.read(jpeg: jpeg, limit: 4 << 20).profile?.data == large.data)
        // The same chunks in another order (writers may do that): reassembled by their sequence numbers.
        var segments: [Data] = []
        var rest = Data()
        var offset = jpeg.startIndex + 2
        while offset + 4 <= jpeg.endIndex, jpeg[offset] == 0xFF, jpeg[offset + 1] != 0xDA {
            let length = Int(jpeg[offset + 2]) << 8 | Int(jpeg[offset + 3])
            let segment = jpeg[offset..<(offset + 2 + length)]
            if jpeg[offset + 1] == 0xE2 { segments.append(Data(segment)) } else { rest.append(segment) }
            offset += 2 + length
        }
        let shuffled = Data([0xFF, 0xD8]) + rest + Data(segments.reversed().joined()) + jpeg[offset...]
        #expect(ICCProfileReader.read(jpeg: shuffled, limit: 4 << 20).profile?.data == large.data)
        #expect(try ImageDecoder.decode(shuffled).width == 96)
        // Over the limit while reassembling: refused as a limit, not as damage.
        guard case .tooLarge = ICCProfileReader.read(jpeg: jpeg, limit: 100_000) else { Issue.record("limit not applied"); return }
    }

    /// Found by the fuzzer: a JPEG whose matrix/TRC profile makes NaN in the tables (a table
    /// index from NaN read out of bounds). Such tables now go to Little CMS, and NaN is clamped.
    @Test func aProfileThatMakesNaNIsHandled() throws {
        let parts = [
        "/9j/4AAQSkZJRgABAQAAAQABAAD/4gJUSUNDX1BST0ZJTEUAAQEAAAJEbGNtcwRAAABtbnRyUkdCIFhZWiAH6gALABkACAA2AAFh",
        "Y3NwQVBQTAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA9tYAAQAAAADTLWxjbXMAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "AAAAAAAAAAAAAAAAAAAAAAAAAAtkZXNjAAABCAAAADBjcHJ0AAABOAAAAEx3dHB0AAABhAAAABRjaGFkAAABmAAAACxyWFlaAAAB",
        "xAAAABRiWFlaAAAB2AAAABRnWFlaAAAB7AAAABRyVFJDAAACAAAAACBnVFJDAAACAAAAACBiVFJDAAACAAAAACBjaHJtAAACIAAA",
        "ACRtbHVjAAAAAAAAAAEAAAAMZW5VUwAAABQAAAAcAEQAaQBzAHAA/v//jHkAIABQADNtbHVjAAAAAAAAAAEAAAAMZW5VUwAAADAA",
        "AAAcAE4AbwAgbwAAYwBwAHkAcgBpAGcAaAB0ACwAIAB1AHMAZQAgAGYAcgBlAGUAbAB5WFlaIAAAAAAAAPbWAAEAAAAA0y1zZjMy",
        "AAAAAAABDEIAAAXe///zJQAAB5MAAP2Q///7of///aIAAAPcAADAblhZWiAAAAAAAACD3wAAPb////+7WFlaIAAAAAAAACg4AAAR",
        "CwAAyLlYWVogAAAAAAAASr8AALE3AAAKuXBhcmEAAAAAAAP///8DZmYAAPKnAAANWQAAE9AAAApbY2hybQAAAAAAAwAAAACuFAAA",
        "UewAAEPXAACwpAAAJmYAAA9c/9sAQwAKBwcIBwYKCAgICwoKCw4YEA4NDQ4dFRYRGCMfJSQiHyIhJis3LyYpNCkhIjBBMTQ5Oz4+",
        "PiUuRElDPEg3PT47/9sAQwEKCwsODQ4cEBAcOygiKDs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7",
        "Ozs7Ozs7/8AAEQgAEAAYAwEiAAIRAQMRAf/EAB8AAAEFAQEBAQEBAAAAAAAAAAABAgMEBQYHCAkKC//EALUQAAIBAwMCBAMFBQQE",
        "AAABfQECAwAEEQUSITFBBhNRYQcicRQygZGhCCNCscEVUtHwJDNicoIJChYXGBkaJSYnKCkqNDU2Nzg5OkNERUZHSElKU1RVVldY",
        "WVpjZGVmZ2hpanN0dXZ3eHl6g4SFhoeIiYqSk2xqaWhnZmVYo6Slpqeoqaqys7S1tre4Nzg5OkNERUZHSElKU1RVVldYWVpjZGVm",
        "Z2hpanN0dXZ3eHl6goMvhYaHiImKkpOUlZaXmJmaoqOkpaanqKmqsrO0tba3uLm6wsPExcbHyMnK0tPU1dbX2Nna4uPk5ebn6Onq",
        "8vP09fb3+Pn6/9oADAMBAAIRAxEAPwDg7fSOny1p2+kdPlrpbfSOny1p2+kdPloq5h5nDl2a7anNW+kdPloruLfSOjm0V5ksx13P",
        "t8Pmvubn/9k=",
        ]
        let jpeg = try #require(Data(base64Encoded: parts.joined()))
        // A sound 24×16 JPEG whose profile's curves make NaN: the header and the pixels must
        // both come back, converted exactly as Little CMS's own transform converts them (the
        // fast path must not turn NaN into colours of its own).
        let info = try ImageDecoder.info(of: jpeg)
        #expect(info.width == 24 && info.height == 16)
        let profile = try #require(info.colorProfile.profile, "the profile is read, not taken as damaged")
        let converted = try ImageDecoder.decode(jpeg, info: info, covering: (32, 32))
        let stored = try ImageDecoder.decode(jpeg, info: info, covering: (32, 32), color: .keepSourceProfile)
        #expect(converted.width == 24 && converted.height == 16)
        let reference = try #require(ColorConverter.convertWithLittleCMS(stored, from: profile))
        var worst = 0
        for y in 0..<16 { for x in 0..<24 {
            let a = converted.pixel(x: x, y: y), b = reference.pixel(x: x, y: y)
            for c in 0..<4 { worst = max(worst, abs(Int(a[c]) - Int(b[c]))) }
        } }
        #expect(worst <= 1, "largest difference from Little CMS: \(worst) levels")
    }

    @Test func sRGBProfilesAreToldByTheirContentsNotTheirNames() throws {
        let debian = try #require(ICCProfile(data: try Data(contentsOf: URL(fileURLWithPath: "/usr/share/color/icc/sRGB.icc"))))
        #expect(debian.isSRGB)
        // Named sRGB, but linear (gamma 1): converted, not skipped.
        let linear = try #require(ICCProfile.rgb(primaries: [0.64, 0.33, 0.30, 0.60, 0.15, 0.06], description: "sRGB linear", gamma: 1))
        #expect(!linear.isSRGB)
        #expect(!Self.displayP3.isSRGB && !Self.adobeRGB.isSRGB)
        // sRGB's own primaries and curve under another name: skipped (nothing to change).
        let renamed = try #require(ICCProfile.rgb(primaries: [0.64, 0.33, 0.30, 0.60, 0.15, 0.06], description: "Camera RGB"))
        #expect(renamed.isSRGB)
    }

    @Test func outputsCarryNoMetadata() throws {
        // A camera JPEG: EXIF with GPS and a profile.
        let source = TestExif.insert(into: try ImageEncoder.encode(Self.original, as: .jpeg(quality: 90), iccProfile: Self.displayP3.data),
                                     orientation: 6, make: "Camera", gps: true)
        let info = try ImageDecoder.info(of: source)
        #expect(info.exif?.hasGPS == true && info.colorProfile.profile != nil)
        let bitmap = try ImageDecoder.decode(source)
        for options: ImageEncoder.Options in [.jpeg(quality: 80), .jpeg(quality: 80, progressive: true), .png(), .webp(quality: 80), .avif()] {
            let output = try ImageEncoder.encode(bitmap, as: options)
            let parsed = try ImageDecoder.info(of: output)
            #expect(parsed.exif == nil, "\(options)")
            #expect(parsed.colorProfile == .none, "\(options)")
            for marker in ["Exif", "ICC_PROFILE", "http://ns.adobe.com/xap", "Photoshop 3.0", "eXIf", "iCCP"] {
                #expect(output.range(of: Data(marker.utf8)) == nil, "\(options) carries \(marker)")
            }
            #expect(parsed.uprightWidth == bitmap.width)  // the orientation was applied, not carried
        }
    }
}

@Suite struct RightsMetadataTests {
    @Test func artistAndCopyrightAreKeptOnlyWhenAskedAndNothingElseIs() throws {
        let source = TestExif.insert(into: try ImageEncoder.encode(gradient(width: 64, height: 48), as: .jpeg(quality: 90)),
                                     orientation: 6, make: "Camera", gps: true)
        // TestExif writes no rights fields: add them as a camera would, next to the rest.
        var exif = try #require(try ImageDecoder.info(of: source).exif)
        exif.artist = "Ann Example"
        exif.copyright = "(c) 2026 Ann Example"
        let rights = try #require(RightsMetadata(exif))
        let bitmap = try ImageDecoder.decode(source)
        var translucent = bitmap
        translucent.withUnsafeMutableBytes { bytes in bytes[3] = 128 }  // lossy WebP with alpha: already extended (VP8X)
        for (options, image): (ImageEncoder.Options, Bitmap) in [(.jpeg(quality: 80), bitmap), (.png(), bitmap), (.webp(quality: 80), bitmap),
                                                                 (.webp(lossless: true), bitmap), (.webp(quality: 80), translucent)] {
            let bitmap = image
            let plain = try ImageEncoder.encode(bitmap, as: options)
            #expect(try ImageDecoder.info(of: plain).exif == nil, "\(options)")
            let kept = try ImageEncoder.encode(bitmap, as: options, rights: rights)
            let info = try ImageDecoder.info(of: kept)
            #expect(info.exif?.artist == "Ann Example" && info.exif?.copyright == "(c) 2026 Ann Example", "\(options)")
            #expect(info.exif?.hasGPS == false && info.exif?.make == nil && info.exif?.orientation == 1, "\(options)")
            // Still a valid image with the same pixels.
            #expect(try ImageDecoder.decode(kept).hasSamePixels(as: try ImageDecoder.decode(plain)), "\(options)")
            if case .png = options {
                // The eXIf chunk's CRC is right (libpng would only warn about a wrong one).
                let start = try #require(kept.range(of: Data("eXIf".utf8))).lowerBound
                let length = kept[(start - 4)..<start].reduce(0) { $0 << 8 | Int($1) }
                let crc = kept[(start + 4 + length)..<(start + 8 + length)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
                #expect(CRC32.compute(Array(kept[start..<(start + 4 + length)])) == crc)
                #expect(crc == zlibCRC(Array(kept[start..<(start + 4 + length)])))
            }
        }
    }
}

/// CRC-32 computed bit by bit (an independent check of the table-driven one).
func zlibCRC(_ bytes: [UInt8]) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in bytes {
        crc ^= UInt32(byte)
        for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
    }
    return ~crc
}
