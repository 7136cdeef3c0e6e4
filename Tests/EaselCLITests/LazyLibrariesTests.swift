import EaselCodecs
import EaselSupport
import EaselTestSupport
import Foundation
import Testing

/// The libraries easel loads on first use (CLazy) are not linked, so no command pays for them at
/// start; and the container image (scripts/image.sh) installs every one the built shims open.
@Suite("Libraries loaded on first use", .timeLimit(.minutes(1)))
struct LazyLibrariesTests {
    static let root = S3TestServer.repositoryRoot()

    /// The sonames in image.sh's `lazy_sonames=( … )`.
    static func imageSonames() throws -> Set<String> {
        let script = try String(contentsOf: root.appendingPathComponent("scripts/image.sh"), encoding: .utf8)
        let start = try #require(script.range(of: "lazy_sonames=("))
        let end = try #require(script[start.upperBound...].firstIndex(of: ")"))
        return Set(script[start.upperBound..<end].split(whereSeparator: \.isWhitespace).map(String.init))
    }

    /// The output of `tool arguments`.
    static func output(of tool: String, _ arguments: [String]) async throws -> String {
        try await BlockingIOPool.shared.run {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: tool)
            process.arguments = arguments
            let output = ChildProcesses.pipe()
            process.standardOutput = output
            try ChildProcesses.run(process)
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return text
        }
    }

    /// The sonames compiled into `binary` but not linked by it: the shims' tables (chosen from
    /// the headers' versions where those decide), FFmpeg's (CVideo's, installed by package name
    /// in image.sh) left out.
    static func lazySonames(of binary: URL, linked ldd: String) async throws -> Set<String> {
        let texts = try await output(of: "/usr/bin/strings", ["-a", "-n", "8", binary.path])
        let ffmpeg = ["libavcodec.", "libavformat.", "libavutil.", "libswscale."]
        let names = texts.split(separator: "\n").map(String.init).filter { name in
            name.range(of: #"^lib[A-Za-z0-9_+-]+(-[0-9.]+)?\.so\.[0-9.]+$"#, options: .regularExpression) != nil
                && !ffmpeg.contains { name.hasPrefix($0) } && !ldd.contains(name + " =>")
        }
        return Set(names)
    }

    @Test func theImageInstallsWhatTheShimsOpenAndEaselLinksNoneOfIt() async throws {
        let ldd = try await Self.output(of: "/usr/bin/ldd", [builtProduct("easel").path])
        let image = try Self.imageSonames(), shims = try await Self.lazySonames(of: builtProduct("easel"), linked: ldd)
        #expect(shims.count >= 10 && shims == image, "shims \(shims.sorted()), image.sh \(image.sorted())")
        #expect(ldd.contains("libjpeg"), "ldd printed: \(ldd.prefix(300))")
        // OpenCV comes with the face plugin (libEaselFaces.so, beside easel), not with easel.
        #expect(!ldd.contains("libopencv"), "easel links OpenCV")
        let plugin = builtProduct("easel").deletingLastPathComponent().appendingPathComponent("libEaselFaces.so")
        #expect(try await Self.output(of: "/usr/bin/ldd", [plugin.path]).contains("libopencv_objdetect"))
        for soname in image {
            #expect(!ldd.contains(soname), "easel links \(soname): every process would load it at start")
        }
    }

    /// Without its plugin beside it (a copy of easel elsewhere), easel still serves, and a face
    /// crop is a 500 that names the face detector, not a crop placed some other way.
    @Test func withoutTheFacePluginAFaceCropIsAServerErrorAndTheRestWorks() async throws {
        let directory = try TemporaryDirectory(), cache = try TemporaryDirectory(), origin = try TemporaryDirectory()
        let copy = directory.child("easel")
        try FileManager.default.copyItem(at: builtProduct("easel"), to: copy)
        try ImageEncoder.encode(photoLike(width: 300, height: 200), as: .jpeg(quality: 90)).write(to: origin.child("photo.jpg"))
        let server = try await BlockingIOPool.shared.run {
            try ListeningProcess(executable: copy, arguments: [
                "serve", "--port", "0", "--cache-dir", cache.path, "--origin", origin.path, "--allow-unsigned-ad-hoc", "--no-access-log"])
        }
        defer { server.process.terminate() }
        let port = server.port
        @Sendable func ask(_ target: String) throws -> String {
            let socket = try RawSocket(port: port)
            try socket.send("GET \(target) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            return socket.readUntilClosed(within: .seconds(60)).text
        }
        let plain = try await BlockingIOPool.shared.run { try ask("/images/w=64,h=64,fit=fill,g=sm/photo.jpg") }
        #expect(plain.hasPrefix("HTTP/1.1 200"), "\(plain.prefix(200))")
        let face = try await BlockingIOPool.shared.run { try ask("/images/w=64,h=64,fit=fill,g=face/photo.jpg") }
        #expect(face.hasPrefix("HTTP/1.1 500") && face.contains("the face detector (libEaselFaces.so, OpenCV) could not be loaded"),
                "\(face.prefix(300))")
        // The routes that analyse pixels outside the pipeline say the same.
        let info = try await BlockingIOPool.shared.run { try ask("/info/photo.jpg?faces=1") }
        #expect(info.hasPrefix("HTTP/1.1 500") && info.contains("the face detector (libEaselFaces.so, OpenCV) could not be loaded"),
                "\(info.prefix(300))")
    }
}
