import CPlatform

/// What `easel --version` says: the release this source is, and the commit the program was built
/// from. `make` links the commit into the program's GNU build ID (`scripts/build-id.sh`: the
/// commit's 20 bytes, a byte saying whether the tree had uncommitted changes, and the tag
/// `easl`); a plain `swift build` leaves the linker's own hash there, which names no commit.
package enum BuildInfo {
    /// The release, as semantic versioning writes it.
    package static let version = "0.4.0"

    /// The commit the program was built from (40 hex digits, `-dirty` when the tree had changes
    /// that were not committed), or nil when the build did not record one.
    package static let commit: String? = {
        var bytes = [UInt8](repeating: 0, count: 64)
        let length = Int(easel_build_id(&bytes, Int32(bytes.count)))
        return commit(fromBuildID: Array(bytes.prefix(min(length, bytes.count))))
    }()

    /// The commit a build ID names, when it is one `scripts/build-id.sh` wrote.
    package static func commit(fromBuildID id: [UInt8]) -> String? {
        guard id.count == 25, id.suffix(4) == Array("easl".utf8) else { return nil }
        let digits = id.prefix(20).map { byte in
            let text = String(byte, radix: 16)
            return byte < 16 ? "0" + text : text
        }.joined()
        return id[20] & 1 == 1 ? digits + "-dirty" : digits
    }

    /// `0.4.0 (commit 1a2b…)`, or `0.4.0 (commit unknown: built without make)`.
    package static var description: String {
        "\(version) (commit \(commit ?? "unknown: built without make"))"
    }
}
