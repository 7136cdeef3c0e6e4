import ArgumentParser
import EaselCodecs
import Foundation

struct CompareCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compare",
        abstract: "Print how far images look from a reference: the perceptual distance autoquality targets.",
        discussion: """
            The distance is 1/SSIM − 1 of a multi-scale SSIM in CIE L*a*b* (as the dssim tool \
            measures; 0: identical). Each image must have the reference's size once decoded.
            """)

    @Argument(help: "The reference image.") var reference: String
    @Argument(help: "Images to compare with it.") var images: [String]

    func run() throws {
        CommandRenderIsolation.start()
        let limits = DecodingLimits.default
        let base = PerceptualDistance.reference(try ImageDecoder.decode(try InputFile(path: reference, limit: limits.maxInputBytes).data, limits: limits))
        var failed = false
        for path in images {
            do {
                let image = try ImageDecoder.decode(try InputFile(path: path, limit: limits.maxInputBytes).data, limits: limits)
                guard image.width == base.width, image.height == base.height else {
                    throw ValidationError("\(image.width)×\(image.height), the reference is \(base.width)×\(base.height)")
                }
                print(String(format: "%.6f", PerceptualDistance.distance(base, image)) + "\t" + path)
            } catch {
                failed = true
                FileHandle.standardError.write(Data("\(path): \(error)\n".utf8))
            }
        }
        if failed { throw ExitCode(1) }
    }
}
