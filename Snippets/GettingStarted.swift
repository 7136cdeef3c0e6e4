// Loads a photo through an image pipeline as a named format, as an ad-hoc size and as encoded
// bytes, then uses the codecs alone: a thumbnail, header facts, limits, encoders, placeholders
// and an ICC profile kept. Run it from the repository root: it reads the bundled `Samples/`.

import Easel
import Foundation

// snippet.hide
let temporary = FileManager.default.temporaryDirectory.appendingPathComponent("easel-getting-started")
// snippet.show

// snippet.pipeline
let samples = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("Samples")
let pipeline = try ImagePipeline(configuration: .init(
    formats: ImageFormat.defaults,           // thumb (fit 256), small (fit 512), square (fill 256)
    cacheDirectory: temporary.appendingPathComponent("cache"),
    fetchers: [FileFetcher(root: samples)]))  // the default is an HTTPFetcher alone
// snippet.end

// snippet.format
let photo = samples.appendingPathComponent("chelsea-cat.jpg")
let thumb = try await pipeline.image(for: ImageRequest(url: photo, format: "thumb"))
print("thumb: \(thumb.image.width)×\(thumb.image.height), answered by \(thumb.tier)")
// snippet.end

// snippet.resize
var request = ImageRequest(url: photo, processing: .processors([Resize(width: 800, height: 600, mode: .fill)]))
request.priority = .high
let resized = try await pipeline.image(for: request)
print("resized: \(resized.image.width)×\(resized.image.height)")
// snippet.end

// snippet.encoded
request.encoding = ImageEncoding(.webp, quality: 80)
let answer = try await pipeline.encodedImage(for: request)
try answer.encoded.data.write(to: temporary.appendingPathComponent("cat.webp"))
print("\(answer.encoded.contentType), \(answer.encoded.count) bytes, ETag \(answer.encoded.etag)")
// snippet.end

// snippet.close
await pipeline.close()
// snippet.end

// snippet.codecs
let data = try Data(contentsOf: photo)
let decoded = try ImageDecoder.decode(data, covering: (width: 256, height: 256))  // JPEG: shrunk while decoding
let small = try Resize(width: 256, height: 256, mode: .fit).process(decoded)
let jpeg = try ImageEncoder.encode(small, as: .jpeg(quality: 82))
try jpeg.write(to: temporary.appendingPathComponent("tn_chelsea-cat.jpg"))
// snippet.end

// MARK: The codecs in more detail

// snippet.codecsInfo
let info = try ImageDecoder.info(of: data)              // the header only: no pixels decoded
print("\(info.fileType) \(info.width)×\(info.height), orientation \(info.orientation), \(info.frameCount) frame(s)")
// snippet.end

// snippet.codecsDecode
let limits = DecodingLimits(maxPixels: 20_000_000, maxInputBytes: 16 << 20)
let preview = try ImageDecoder.decode(data, covering: (width: 512, height: 512), limits: limits)
let steps: [any ImageProcessor] = [Resize(width: 512, height: 512, mode: .fit), try Sharpen(sigma: 0.5)]
let sharpened = try steps.process(preview)
// snippet.end

// snippet.codecsEncode
let webp = try ImageEncoder.encode(sharpened, as: .webp(quality: 80))
let avif = try ImageEncoder.encode(sharpened, as: .avif(quality: 60))
let jpeg444 = try ImageEncoder.encode(sharpened, as: .jpeg(quality: 82, chroma: .full444))
print("WebP \(webp.count) B, AVIF \(avif.count) B, JPEG \(jpeg444.count) B")
// snippet.end

// snippet.codecsPlaceholder
let tiny = try Resize(width: 32, height: 32, mode: .fit).process(sharpened)
let blurHash = try Placeholder.blurHash(tiny)
let colour = Placeholder.dominantColor(tiny)
print("BlurHash \(blurHash), dominant colour \(colour.red) \(colour.green) \(colour.blue)")
// snippet.end

// snippet.codecsProfile
// Keep the source's colour space and embed its profile, instead of converting to sRGB.
let asStored = try ImageDecoder.decode(data, color: .keepSourceProfile)
let tagged = try ImageEncoder.encode(asStored, as: .png(compressionLevel: 6), iccProfile: info.colorProfile.profile?.data)
print("PNG with \(info.colorProfile.profile?.description ?? "no") profile: \(tagged.count) B")
// snippet.end
