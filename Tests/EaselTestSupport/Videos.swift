import EaselSupport
import Foundation
import Testing

/// Debian's `ffmpeg` (the test group of `make deps` installs it).
public let ffmpeg = "/usr/bin/ffmpeg"

/// Videos made once per test process (each at most once, whoever asks first), copied to the
/// callers' directories: encoders are the costly part of the video tests on two cores.
private let madeVideos = Locked([String: URL]())
private let videoDirectory = try! TemporaryDirectory()

/// A video of three one-second segments, red, green and blue, `width × height` at 10 frames a
/// second, written by `ffmpeg` with one encoder thread as `name` into `directory`, with the codec
/// options given (H.264 by default; `["-c:v", "libvpx-vp9", "-b:v", "200k"]` for VP9…); `extra`
/// come before the output file (a container's flags); `audio` adds a silent AAC track. Seconds
/// 0.5, 1.5 and 2.5 show red, green and blue. (ffmpeg is waited for off the cooperative pool.)
public func threeColourVideo(in directory: URL, name: String, width: Int = 160, height: Int = 120,
                             codec: [String] = ["-c:v", "libx264", "-preset", "ultrafast", "-g", "10"], extra: [String] = [],
                             audio: Bool = false) async throws -> URL {
    try #require(FileManager.default.isExecutableFile(atPath: ffmpeg), "no ffmpeg: run `make deps` (ffmpeg)")
    let key = ([name, "\(width)x\(height)", audio ? "audio" : ""] + codec + extra).joined(separator: " ")
    let output = directory.appendingPathComponent(name)
    if let made = madeVideos.withLock({ $0[key] }) {
        try? FileManager.default.removeItem(at: output)
        try FileManager.default.copyItem(at: made, to: output)
        return output
    }
    let made = videoDirectory.child("\(UUID().uuidString)-\(name)")
    var arguments = ["-hide_banner", "-loglevel", "error", "-y"]
    for colour in ["red", "green", "blue"] {
        arguments += ["-f", "lavfi", "-i", "color=c=\(colour):s=\(width)x\(height):d=1:r=10"]
    }
    if audio { arguments += ["-f", "lavfi", "-i", "anullsrc=r=8000:cl=mono:d=3"] }
    arguments += ["-filter_complex", "[0:v][1:v][2:v]concat=n=3:v=1:a=0,format=yuv420p[v]", "-map", "[v]"]
    if audio { arguments += ["-map", "3:a", "-c:a", "aac", "-shortest"] }
    arguments += codec + ["-threads", "1"] + extra + [made.path]
    try #require(try await runToolOffThePool(ffmpeg, arguments, timeout: 120), "ffmpeg made \(name)")
    madeVideos.withLock { $0[key] = made }
    try? FileManager.default.removeItem(at: output)
    try FileManager.default.copyItem(at: made, to: output)
    return output
}
