import EaselCodecs
import Testing

/// Each format is declared once, in `FormatRegistry`; everything else reads it.
@Suite("Format registry")
struct FormatRegistryTests {
    @Test func everyTypeIsDeclaredOnceWithItsOwnNames() {
        let declared = FormatRegistry.entries.map(\.type)
        #expect(Set(declared) == Set(ImageFileType.allCases))
        #expect(declared.count == Set(declared).count)
        let names = FormatRegistry.entries.flatMap(\.names)
        #expect(names.count == Set(names).count, "a name names one format")
        for entry in FormatRegistry.entries {
            #expect(entry.names.allSatisfy { $0 == $0.lowercased() } && entry.extensions.allSatisfy { $0 == $0.lowercased() })
            #expect(FormatRegistry.entry(entry.type).mimeType == entry.type.mimeType)
            for name in entry.names { #expect(ImageFileType(name: name.uppercased()) == entry.type) }
            for fileExtension in entry.extensions { #expect(FormatRegistry.forExtension(fileExtension)?.type == entry.type) }
        }
        #expect(ImageFileType(name: "jpg") == .jpeg && ImageFileType(name: "HEIF") == .heic && ImageFileType(name: "tif") == .tiff)
        #expect(ImageFileType(name: "jp2") == nil)
    }

    /// Every declared signature is recognised as its own type by `sniff`, in the registry's order.
    @Test func everySignatureSniffsAsItsFormat() throws {
        for entry in FormatRegistry.entries {
            guard case .signatures(let signatures) = entry.magic else { continue }
            for signature in signatures {
                var bytes = [UInt8](repeating: 0x20, count: 32)
                for (offset, part) in signature { bytes.replaceSubrange(offset..<(offset + part.count), with: part) }
                #expect(try ImageFileType.sniff(bytes) == entry.type, "\(entry.type)")
            }
        }
    }

    @Test func capabilitiesSayWhatEachFormatDoes() {
        #expect(FormatRegistry.names(with: [.encode, .animation]) == ["webp", "gif", "avif", "jxl"])
        #expect(FormatRegistry.names(with: .quality) == ["jpeg", "webp", "avif", "heic", "jxl"])
        #expect(FormatRegistry.names(with: .video) == ["mkv", "mp4"])
        #expect(FormatRegistry.entry(.jpeg).fileExtension == "jpg")
        #expect(ImageEncoder.Options(.png)?.fileType == .png && ImageEncoder.Options(.tiff) == nil)
        for entry in FormatRegistry.entries where entry.capabilities.contains(.encode) {
            #expect(ImageEncoder.Options(entry.type)?.fileType == entry.type)
        }
    }
}
