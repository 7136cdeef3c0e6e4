import EaselSupport
import EaselTestSupport
import Foundation
import Testing

/// `easel --version`, the build ID it reads the commit from, and the shell completions the help
/// points to.
@Suite("easel --version and completions")
struct VersionTests {
    @Test func theVersionNamesTheReleaseAndTheCommitMakeBuiltFrom() async throws {
        let (status, output, _) = try await runEasel(["--version"])
        #expect(status == 0)
        let line = output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(line.hasPrefix("easel \(BuildInfo.version) (commit "), "\(line)")
        // `make test` links the commit into the build ID; a plain `swift build` says so.
        if let commit = BuildInfo.commit {
            #expect(line.contains(commit), "\(line)")
            // The commit checked out here (the build ID is made at the build, from this tree).
            let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            func read(_ path: String) -> String? {
                (try? String(contentsOf: root.appendingPathComponent(".git/" + path), encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
            }
            var head = read("HEAD")
            if let reference = head, reference.hasPrefix("ref: ") { head = read(String(reference.dropFirst(5))) }
            if let head { #expect(commit.hasPrefix(head), "HEAD is \(head)") }
            #expect(commit.count == 40 || commit.hasSuffix("-dirty"), "\(commit)")
        } else {
            #expect(line.hasSuffix("(commit unknown: built without make)"), "\(line)")
        }
    }

    @Test func aBuildIDNamesACommitOnlyWithTheTag() {
        let commit: [UInt8] = (0..<20).map { UInt8($0 * 13 % 256) }
        let hex = commit.map { String(format: "%02x", $0) }.joined()
        #expect(BuildInfo.commit(fromBuildID: commit + [0] + Array("easl".utf8)) == hex)
        #expect(BuildInfo.commit(fromBuildID: commit + [1] + Array("easl".utf8)) == hex + "-dirty")
        #expect(BuildInfo.commit(fromBuildID: commit) == nil, "the linker's own SHA-1 names no commit")
        #expect(BuildInfo.commit(fromBuildID: commit + [0] + Array("easx".utf8)) == nil)
        #expect(BuildInfo.commit(fromBuildID: []) == nil)
    }

    @Test(arguments: ["bash", "zsh", "fish"])
    func completionsCoverEveryCommand(shell: String) async throws {
        let (status, output, error) = try await runEasel(["--generate-completion-script", shell])
        #expect(status == 0, "\(error)")
        for command in ["serve", "thumbnail", "info", "cache", "sign"] {
            #expect(output.contains(command), "\(shell): \(command)")
        }
        #expect(output.contains("log-format"), "\(shell): serve's options")
    }
}
