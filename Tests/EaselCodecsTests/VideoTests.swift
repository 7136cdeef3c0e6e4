@testable import EaselCodecs
import EaselSupport
import EaselTestSupport
import Foundation
import Testing

/// Video sources through FFmpeg: videos Debian's `ffmpeg` makes at test time, of three coloured
/// one-second segments, give the right colour at seconds 0.5, 1.5 and 2.5 in every container
/// and codec allowed; their facts are read; damaged, refused and oversized videos are typed
/// errors.
@Suite(.serialized, .timeLimit(.minutes(3))) struct VideoTests {
    /// The colour at the centre of a frame.
    static func centre(_ bitmap: Bitmap) -> [Int] {
        bitmap.pixel(x: bitmap.width / 2, y: bitmap.height / 2).prefix(3).map(Int.init)
    }

    static func near(_ colour: [Int], _ expected: [Int], tolerance: Int = 12) -> Bool {
        zip(colour, expected).allSatisfy { abs($0 - $1) <= tolerance }
    }

    static let colours = [(0.5, [255, 0, 0]), (1.5, [0, 128, 0]), (2.5, [0, 0, 255])]

    @Test(arguments: [
        ("h264.mp4", ["-c:v", "libx264", "-preset", "ultrafast", "-g", "10"]),
        ("hevc.mov", ["-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "log-level=error:pools=none:frame-threads=1", "-g", "10", "-tag:v", "hvc1"]),
        ("vp9.webm", ["-c:v", "libvpx-vp9", "-b:v", "200k", "-deadline", "realtime", "-cpu-used", "8", "-g", "10"]),
        ("vp8.webm", ["-c:v", "libvpx", "-b:v", "200k", "-deadline", "realtime", "-cpu-used", "8", "-g", "10"]),
        ("h264.mkv", ["-c:v", "libx264", "-preset", "ultrafast", "-g", "10"]),
    ])
    func eachSecondShowsItsSegmentsColour(name: String, codec: [String]) async throws {
        let directory = try TemporaryDirectory()
        let data = try Data(contentsOf: try await threeColourVideo(in: directory.url, name: name, codec: codec))
        let info = try ImageDecoder.info(of: data)
        #expect(info.fileType == (name.hasSuffix(".mp4") || name.hasSuffix(".mov") ? .mp4 : .matroska))
        #expect(info.width == 160 && info.height == 120 && !info.hasAlpha)
        let video = try #require(info.video)
        #expect(abs((video.duration ?? 0) - 3) < 0.1, "\(video)")
        #expect(video.streams == 1 && video.pixelAspect == 1)
        for (second, expected) in Self.colours {
            let frameInfo = try ImageDecoder.info(of: data, video: VideoPosition(second: second))
            let frame = try ImageDecoder.decode(data, info: frameInfo)
            #expect(frame.width == 160 && frame.height == 120)
            #expect(Self.near(Self.centre(frame), expected), "\(name) at \(second) s: \(Self.centre(frame))")
        }
        // The default: the frame at 1 s, the first of the green segment.
        #expect(Self.near(Self.centre(try ImageDecoder.decode(data)), [0, 128, 0]))
    }

    @Test func aKeyFrameIsTheOneAtOrBeforeTheSecond() async throws {
        let directory = try TemporaryDirectory()
        // One key frame every 2 s (20 frames): at 1.5 s, the key frame of 0 s is still red.
        let data = try Data(contentsOf: try await threeColourVideo(in: directory.url, name: "gop.mp4",
                                                             codec: ["-c:v", "libx264", "-preset", "ultrafast", "-g", "20", "-keyint_min", "20",
                                                                     "-sc_threshold", "0"]))
        let exact = try ImageDecoder.decode(data, info: try ImageDecoder.info(of: data, video: VideoPosition(second: 1.5)))
        let key = try ImageDecoder.decode(data, info: try ImageDecoder.info(of: data, video: VideoPosition(second: 1.5, keyframeOnly: true)))
        #expect(Self.near(Self.centre(exact), [0, 128, 0]))
        #expect(Self.near(Self.centre(key), [255, 0, 0]), "\(Self.centre(key))")
    }

    @Test func aSecondPastTheEndIsTheFirstFrame() async throws {
        let directory = try TemporaryDirectory()
        let data = try Data(contentsOf: try await threeColourVideo(in: directory.url, name: "clip.mp4"))
        let info = try ImageDecoder.info(of: data, video: VideoPosition(second: 40))
        #expect(info.video?.position.second == 0)
        #expect(Self.near(Self.centre(try ImageDecoder.decode(data, info: info)), [255, 0, 0]))
    }

    @Test func theDisplayMatrixTurnsTheFrameAsFFmpegDoes() async throws {
        let directory = try TemporaryDirectory()
        // Red over blue, with a display matrix of a quarter turn; ffmpeg's own autorotated frame
        // is the reference (FFmpeg 5.1 writes `rotate=90` as a matrix that turns the frame a
        // quarter counter-clockwise for display: red ends on the left).
        let quiet = ["-hide_banner", "-loglevel", "error", "-y"]
        #expect(try await runToolOffThePool(ffmpeg, quiet + ["-f", "lavfi", "-i", "color=c=red:s=160x120:d=1,drawbox=x=0:y=60:w=160:h=60:c=blue:t=fill,format=yuv420p",
                                             "-c:v", "libx264", directory.child("updown.mp4").path]))
        #expect(try await runToolOffThePool(ffmpeg, quiet + ["-i", directory.child("updown.mp4").path, "-c", "copy", "-metadata:s:v:0", "rotate=90",
                                             directory.child("turned.mp4").path]))
        #expect(try await runToolOffThePool(ffmpeg, quiet + ["-i", directory.child("turned.mp4").path, "-frames:v", "1", directory.child("ffmpeg.png").path]))
        let data = try Data(contentsOf: directory.child("turned.mp4"))
        let info = try ImageDecoder.info(of: data, video: VideoPosition(second: 0.5))
        #expect(info.orientation == 8 && info.uprightWidth == 120 && info.uprightHeight == 160)
        let frame = try ImageDecoder.decode(data, info: info)
        let reference = try ImageDecoder.decode(try Data(contentsOf: directory.child("ffmpeg.png")))
        #expect(frame.width == reference.width && frame.height == reference.height)
        for (x, y) in [(20, 80), (100, 80), (20, 10), (100, 150)] {
            let ours = frame.pixel(x: x, y: y).prefix(3).map(Int.init), theirs = reference.pixel(x: x, y: y).prefix(3).map(Int.init)
            #expect(Self.near(ours, theirs), "(\(x), \(y)): \(ours) where ffmpeg has \(theirs)")
        }
        #expect(Self.near(frame.pixel(x: 20, y: 80).prefix(3).map(Int.init), [255, 0, 0]), "red on the left")
    }

    @Test func damagedAndRefusedVideosAreTypedErrors() async throws {
        let directory = try TemporaryDirectory()
        let data = try Data(contentsOf: try await threeColourVideo(in: directory.url, name: "clip.mp4",
                                                             extra: ["-movflags", "+faststart"]))
        // Cut short: the index is there, the frames are not.
        let cut = data.prefix(data.count / 3)
        #expect(throws: CodecError.self) { _ = try ImageDecoder.decode(cut, info: try ImageDecoder.info(of: cut, video: VideoPosition(second: 2.5))) }
        // An EBML header and noise.
        var noise = Data([0x1A, 0x45, 0xDF, 0xA3])
        var seed: UInt32 = 7
        for _ in 0..<20_000 { seed = seed &* 1_103_515_245 &+ 12345; noise.append(UInt8(truncatingIfNeeded: seed >> 16)) }
        #expect(throws: CodecError.self) { _ = try ImageDecoder.decode(noise) }
        // Limits: duration, streams, pixels; each before any frame is decoded.
        func refusedByALimit(_ about: String) -> (any Error) -> Bool {
            { error in
                guard case CodecError.invalidParameters(let reason) = error else { return false }
                return reason.contains("limit") && reason.contains(about)
            }
        }
        var short = DecodingLimits()
        short.maxVideoDuration = 2
        #expect(performing: { _ = try ImageDecoder.info(of: data, limits: short) }, throws: refusedByALimit("lasts"))
        var noVideo = DecodingLimits()
        noVideo.maxVideoDuration = 0
        #expect(performing: { _ = try ImageDecoder.info(of: data, limits: noVideo) }, throws: refusedByALimit("lasts"))
        #expect(DecodingLimits().tightened(by: noVideo).maxVideoDuration == 0, "0 is the tightest")
        let twoStreams = try Data(contentsOf: try await threeColourVideo(in: directory.url, name: "sound.mp4", audio: true))
        #expect(try ImageDecoder.info(of: twoStreams).video?.streams == 2)
        var oneStream = DecodingLimits()
        oneStream.maxVideoStreams = 1
        #expect(performing: { _ = try ImageDecoder.info(of: twoStreams, limits: oneStream) }, throws: refusedByALimit("stream"))
        #expect(throws: CodecError.tooManyPixels(width: 160, height: 120, limit: 10_000)) {
            _ = try ImageDecoder.info(of: data, limits: DecodingLimits(maxPixels: 10_000))
        }
        // A video has no pages.
        #expect(throws: CodecError.noSuchPage(page: 1, pages: 1)) { _ = try ImageDecoder.info(of: data, page: 1) }
        // A codec that is not allowed (MPEG-2 in Matroska) is unsupported, not decoded.
        let mpeg2 = try Data(contentsOf: try await threeColourVideo(in: directory.url, name: "mpeg2.mkv", codec: ["-c:v", "mpeg2video"]))
        #expect {
            _ = try ImageDecoder.info(of: mpeg2)
        } throws: { error in
            if case CodecError.unsupportedFormat = error { return true }
            return false
        }
        // AVI and MPEG-TS are no formats Easel reads.
        let avi = try Data(contentsOf: try await threeColourVideo(in: directory.url, name: "clip.avi", codec: ["-c:v", "mpeg4"]))
        #expect(throws: CodecError.unknownFormat) { _ = try ImageDecoder.info(of: avi) }
    }

    @Test func anAnamorphicFrameIsShownAtItsDisplayWidth() async throws {
        let directory = try TemporaryDirectory()
        // Pixels twice as wide as they are tall: 160 coded columns shown as 320.
        let data = try Data(contentsOf: try await threeColourVideo(in: directory.url, name: "wide.mp4", extra: ["-aspect", "8:3"]))
        let info = try ImageDecoder.info(of: data)
        #expect(info.width == 320 && info.height == 120 && info.video?.pixelAspect == 2 && info.video?.codedWidth == 160)
        let frame = try ImageDecoder.decode(data, info: info)
        #expect(frame.width == 320 && frame.height == 120 && Self.near(Self.centre(frame), [0, 128, 0]))
    }

    @Test func aDecodeNobodyWaitsForStops() async throws {
        let directory = try TemporaryDirectory()
        let data = try Data(contentsOf: try await threeColourVideo(in: directory.url, name: "clip.mp4"))
        let info = try ImageDecoder.info(of: data, video: VideoPosition(second: 2.5))
        let flag = CancellationFlag()
        flag.raise()
        #expect(throws: CodecError.cancelled) {
            try WorkCancellation.run(with: flag) { _ = try ImageDecoder.decode(data, info: info) }
        }
        // The same decode, wanted, is made.
        #expect(Self.near(Self.centre(try WorkCancellation.run(with: CancellationFlag()) { try ImageDecoder.decode(data, info: info) }), [0, 0, 255]))
    }

    @Test func videoTypesAreToldByTheirBytes() throws {
        #expect(try ImageFileType.sniff(Data([0, 0, 0, 0x18] + Array("ftypisom".utf8) + [0, 0, 2, 0] + Array("isomiso2".utf8))) == .mp4)
        #expect(try ImageFileType.sniff(Data([0, 0, 0, 0x14] + Array("ftypqt  ".utf8) + [0, 0, 2, 0] + Array("qt  ".utf8))) == .mp4)
        #expect(try ImageFileType.sniff(Data([0x1A, 0x45, 0xDF, 0xA3, 0x9F, 0x42, 0x86, 0x81, 0x01])) == .matroska)
        // AVIF and HEIC stay images whatever else their brands say.
        #expect(try ImageFileType.sniff(Data([0, 0, 0, 0x18] + Array("ftypavif".utf8) + [0, 0, 0, 0] + Array("mif1isom".utf8))) == .avif)
        #expect(ImageFileType.mp4.isVideo && ImageFileType.matroska.isVideo && !ImageFileType.avif.isVideo)
    }
}
