import Foundation
import Testing

/// Debian's `ffmpeg` (the test group of `make deps` installs it).
public let ffmpeg = "/usr/bin/ffmpeg"

/// A video of three one-second segments, red, green and blue, `width × height` at 25 frames a
/// second, written by `ffmpeg` into `directory` as `name` with the codec options given (H.264
/// by default; `["-c:v", "libvpx-vp9", "-b:v", "200k"]` for VP9…); `extra` come before the
/// output file (`-metadata:s:v:0 rotate=90`, a container's flags). Seconds 0.5, 1.5 and 2.5
/// show red, green and blue.
public func threeColourVideo(in directory: URL, name: String, width: Int = 160, height: Int = 120,
                             codec: [String] = ["-c:v", "libx264", "-g", "25"], extra: [String] = []) throws -> URL {
    try #require(FileManager.default.isExecutableFile(atPath: ffmpeg), "no ffmpeg: run `make deps` (ffmpeg)")
    let output = directory.appendingPathComponent(name)
    var arguments = ["-hide_banner", "-loglevel", "error", "-y"]
    for colour in ["red", "green", "blue"] {
        arguments += ["-f", "lavfi", "-i", "color=c=\(colour):s=\(width)x\(height):d=1:r=25"]
    }
    arguments += ["-filter_complex", "[0:v][1:v][2:v]concat=n=3:v=1:a=0,format=yuv420p[v]", "-map", "[v]"]
    arguments += codec + extra + [output.path]
    try #require(try runTool(ffmpeg, arguments, timeout: 120), "ffmpeg made \(name)")
    return output
}
