// Image bombs: files declaring enormous sizes must be refused before any pixel memory is
// allocated, quickly. For each format, times the refusal and measures resident memory growth.
// Prints one line per case and exits 1 if any refusal took ≥ 50 ms, grew memory by ≥ 16 MB, or
// was not a tooManyPixels error.
import EaselCodecs
import Foundation

func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    return fields.count > 1 ? (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE))) : 0
}

func be32(_ v: Int) -> [UInt8] { [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }

var small = Bitmap(width: 8, height: 8, pixelFormat: .rgba8)
small.withUnsafeMutableBytes { for i in 0..<$0.count { $0[i] = UInt8(i % 251) } }

var cases: [(String, Data)] = []
// PNG 100000 × 100000: patch IHDR (CRC left stale: the header parser reads it first).
var png = try ImageEncoder.encode(small, as: .png())
png.replaceSubrange(16..<24, with: be32(100_000) + be32(100_000))
cases.append(("PNG 100000x100000", png))
// JPEG 65500 × 65500: patch SOF0.
var jpeg = try ImageEncoder.encode(small, as: .jpeg(quality: 80))
let bytes = [UInt8](jpeg)
if let sof = (0..<(bytes.count - 9)).first(where: { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xC0 }) {
    jpeg.replaceSubrange((sof + 5)..<(sof + 9), with: [0xFF, 0xDC, 0xFF, 0xDC])
}
cases.append(("JPEG 65500x65500", jpeg))
// GIF 65535 × 65535 logical screen.
var gif = Data([0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 0xFF, 0xFF, 0xFF, 0xFF, 0x80, 0, 0, 255, 0, 0, 0, 0, 255,
                0x2C, 0, 0, 0, 0, 2, 0, 1, 0, 0, 2, 2, 0x44, 0x01, 0, 0x3B])
cases.append(("GIF 65535x65535", gif))
// WebP: a lossless VP8L header declares 14-bit sizes, at most 16384 × 16384 (268 MP).
var webp = try ImageEncoder.encode(small, as: .webp(lossless: true))
// VP8L: signature byte 0x2F at offset 20, then width-1 (14 bits) and height-1 (14 bits), little endian.
let size14: UInt32 = 16383 | (16383 << 14) | (UInt32(webp[21 + 3] & 0xF0) << 24)
webp.replaceSubrange(21..<25, with: withUnsafeBytes(of: size14.littleEndian) { Array($0) })
cases.append(("WebP 16384x16384", webp))

var failed = false
for (name, data) in cases {
    let before = residentBytes()
    let start = DispatchTime.now().uptimeNanoseconds
    var outcome = "decoded (!)"
    do {
        _ = try ImageDecoder.decode(data)
        failed = true
    } catch CodecError.tooManyPixels(let width, let height, _) {
        outcome = "refused: \(width)x\(height) over the limit"
    } catch {
        outcome = "other error: \(error)"
        failed = true
    }
    let milliseconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
    let growth = residentBytes() - before
    if milliseconds >= 50 || growth >= 16 << 20 { failed = true }
    print(String(format: "%-20@ %8.3f ms  %+8d KB  %@", name as NSString, milliseconds, growth / 1024, outcome as NSString))
}
exit(failed ? 1 : 0)
