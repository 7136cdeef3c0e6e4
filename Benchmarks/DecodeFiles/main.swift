// Decodes the given image files with EaselCodecs (full size, RGBA) and prints
// `loop_seconds=S`: the time spent reading and decoding, for peers/thumbnail.sh's PNG table.
import EaselCodecs
import Foundation

let files = Array(CommandLine.arguments.dropFirst())
guard !files.isEmpty else {
    FileHandle.standardError.write(Data("usage: DecodeFiles FILE...\n".utf8))
    exit(2)
}
let start = DispatchTime.now().uptimeNanoseconds
var pixels = 0
for file in files {
    let bitmap = try ImageDecoder.decode(try Data(contentsOf: URL(fileURLWithPath: file)))
    pixels &+= bitmap.width * bitmap.height
}
let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
print("decoded \(files.count) files, \(pixels) pixels")
print("loop_seconds=\(seconds)")
