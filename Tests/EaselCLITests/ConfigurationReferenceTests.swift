import EaselServer
import EaselSupport
import EaselTestSupport
import Foundation
import Testing

/// `docs/configuration.md` is `easel settings` (made from `ServerConfiguration.reference`), and
/// the reference misses nothing: every property of the configuration, every environment
/// variable the sources read, every flag of `easel serve`.
@Suite("The configuration reference")
struct ConfigurationReferenceTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let settings = ServerConfiguration.reference.flatMap(\.settings)

    @Test func theDocsPageIsWhatTheCommandPrints() async throws {
        let (status, output, error) = try await runEasel(["settings"])
        #expect(status == 0, "\(error)")
        let page = try String(contentsOf: Self.root.appendingPathComponent("docs/configuration.md"), encoding: .utf8)
        #expect(page == output, "docs/configuration.md is stale: make configuration-reference")
    }

    @Test func everyPropertyOfTheConfigurationHasAnEntry() {
        let keys = Set(Self.settings.compactMap(\.key))
        var missing: [String] = []
        func walk(_ value: Any, prefix: String) {
            for child in Mirror(reflecting: value).children {
                guard let label = child.label else { continue }
                let path = prefix + label
                // Nested settings objects: each of their keys (a section of their own).
                if child.value is DeliverySettings || child.value is ImgproxySettings || child.value is AutoQualityConfiguration
                    || child.value is RenderWorkerSettings {
                    walk(child.value, prefix: path + ".")
                } else if !keys.contains(path) {
                    missing.append(path)
                }
            }
        }
        walk(ServerConfiguration(), prefix: "")
        walk(ServerConfiguration.defaultFormats[0], prefix: "formats[].")
        #expect(missing.isEmpty, "not in ServerConfiguration.reference: \(missing)")
        let known = Set(Mirror(reflecting: ServerConfiguration()).children.compactMap(\.label))
        for key in keys where !key.contains(".") && !key.contains("[") { #expect(known.contains(key), "\(key) is no setting") }
    }

    @Test func everyVariableTheSourcesReadHasAnEntry() throws {
        let documented = Set(Self.settings.flatMap(\.variables))
        let pattern = try Regex(#""((?:EASEL|IMGPROXY|THUMBOR|OTEL|AWS)_[A-Z0-9_]+)""#)
        var read = Set<String>()
        let files = FileManager.default.enumerator(at: Self.root.appendingPathComponent("Sources"), includingPropertiesForKeys: nil)
        while let file = files?.nextObject() as? URL {
            // (The reference itself names every variable it documents: not a reader.)
            guard ["swift", "c"].contains(file.pathExtension), file.lastPathComponent != "ConfigurationReference.swift",
                  let text = try? String(contentsOf: file, encoding: .utf8) else { continue }
            for match in text.matches(of: pattern) { read.insert(String(text[match.output[1].range!])) }
        }
        #expect(read.count > 50, "the sources were found: \(read.count)")
        #expect(read.subtracting(documented).isEmpty, "read by the sources, not in the reference: \(read.subtracting(documented).sorted())")
        // OpenTelemetry's variables beyond those easel reads are swift-otel's own.
        let readElsewhere = documented.subtracting(read).filter { !$0.hasPrefix("OTEL_") }
        #expect(readElsewhere.isEmpty, "in the reference, read nowhere: \(readElsewhere.sorted())")
    }

    @Test func everyFlagOfServeHasAnEntry() async throws {
        let (status, help, _) = try await runEasel(["serve", "--help"])
        #expect(status == 0)
        let flags = Set(help.matches(of: try Regex(#"--[a-z][a-z0-9-]*"#)).map { String(help[$0.range]) })
            .subtracting(["--help", "--version"])
            .map { $0.hasPrefix("--no-") ? "--" + $0.dropFirst(5) : $0 }
        let documented = Set(Self.settings.compactMap(\.flag))
        #expect(flags.count > 10, "\(help)")
        #expect(Set(flags).subtracting(documented).isEmpty, "flags of easel serve not in the reference: \(Set(flags).subtracting(documented).sorted())")
    }
}
