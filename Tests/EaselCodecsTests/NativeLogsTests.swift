@testable import EaselCodecs
import EaselSupport
import Foundation
import Logging
import Testing

/// GLib's messages (librsvg, poppler, Pango) reach swift-log once routed, though GLib itself is
/// loaded only with the first SVG, PDF or text mark, after the routing was asked for.
@Suite("Native logs")
struct NativeLogsTests {
    /// Keeps what a logger is given.
    struct Capture: LogHandler {
        let lines: Locked<[(Logger.Level, String, String?)]>
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            let domain = event.metadata?["domain"].map { "\($0)" }
            lines.withLock { $0.append((event.level, "\(event.message)", domain)) }
        }
    }

    /// GLib's own g_log_structured_array (not variadic, so callable here).
    struct Field {
        var key: UnsafePointer<CChar>?
        var value: UnsafeRawPointer?
        var length: Int
    }
    /// A literal's bytes, NUL-terminated, for the life of the process.
    static func text(_ literal: StaticString) -> UnsafePointer<CChar> {
        UnsafeRawPointer(literal.utf8Start).assumingMemoryBound(to: CChar.self)
    }
    typealias LogArray = @convention(c) (Int32, UnsafeRawPointer?, Int) -> Void

    @Test func aGLibWarningAfterTheFirstSVGGoesToTheLogger() throws {
        let lines = Locked<[(Logger.Level, String, String?)]>([])
        NativeLogs.route(to: Logger(label: "native") { _ in Capture(lines: lines) })
        // The first SVG loads librsvg and with it GLib; the writer is installed then.
        #expect(try ImageDecoder.decode(SVGTests.drawing).width == 100)
        let glib = try #require(dlopen("libglib-2.0.so.0", RTLD_NOW | RTLD_NOLOAD), "GLib was not loaded by the SVG")
        defer { dlclose(glib) }
        let log = unsafeBitCast(try #require(dlsym(glib, "g_log_structured_array")), to: LogArray.self)
        "easel-test".withCString { domain in
            "a warning from GLib".withCString { message in
                let fields = [Field(key: Self.text("GLIB_DOMAIN"), value: UnsafeRawPointer(domain), length: -1),
                              Field(key: Self.text("MESSAGE"), value: UnsafeRawPointer(message), length: -1)]
                fields.withUnsafeBufferPointer { log(1 << 4, UnsafeRawPointer($0.baseAddress), $0.count) }  // G_LOG_LEVEL_WARNING
            }
        }
        let seen = lines.withLock { $0 }.filter { $0.1 == "a warning from GLib" }
        #expect(seen.count == 1 && seen.first?.0 == .warning && seen.first?.2 == "easel-test", "\(seen)")
    }
}
