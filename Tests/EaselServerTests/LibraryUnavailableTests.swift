import CLazy
@testable import EaselCodecs
import EaselPipeline
@testable import EaselServer
import Foundation
import Testing

/// A library loaded on first use that cannot be loaded (missing, or another version) is the
/// server's failure, typed: `CodecError.libraryUnavailable`, a 500 whose text names the library
/// but not the loader's reason (file paths), which goes to the log.
@Suite("A library that cannot be loaded")
struct LibraryUnavailableTests {
    @Test func aMissingLibraryFailsItsLoadWithTheReasonAndForEver() throws {
        let soname = strdup("libeasel-no-such-library.so.1")!, name = strdup("no_such_function")!
        defer { free(soname); free(name) }
        var sonames: [UnsafePointer<CChar>?] = [UnsafePointer(soname)]
        var symbols = [easel_lazy_symbol(name: UnsafePointer(name), offset: 0)]
        var slot: UnsafeMutableRawPointer?
        let (first, second, problem) = sonames.withUnsafeMutableBufferPointer { names in
            symbols.withUnsafeMutableBufferPointer { table in
                withUnsafeMutablePointer(to: &slot) { functions in
                    var library = easel_lazy_library()
                    library.sonames = UnsafePointer(names.baseAddress)
                    library.soname_count = 1
                    library.symbols = UnsafePointer(table.baseAddress)
                    library.symbol_count = 1
                    library.functions = UnsafeMutableRawPointer(functions)
                    let first = easel_lazy_load(&library), second = easel_lazy_load(&library)
                    let problem = withUnsafeBytes(of: library.problem) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                    return (first, second, problem)
                }
            }
        }
        #expect(first == 0 && second == 0 && slot == nil)
        #expect(problem.hasPrefix("libeasel-no-such-library.so.1 could not be loaded ("), "\(problem)")
    }

    @Test func theShimsResultBecomesATypedServerErrorThatKeepsTheReasonFromTheClient() throws {
        let reason = "libavif.so.15 could not be loaded (/usr/lib/x86_64-linux-gnu/libavif.so.15: cannot open shared object file)"
        #expect(throws: CodecError.libraryUnavailable(library: "libavif", reason: reason)) {
            try checkLibrary(EASEL_LAZY_UNAVAILABLE, library: "libavif", message: reason)
        }
        try checkLibrary(0, library: "libavif", message: "")  // any other result is the caller's
        let error = PipelineError.decoding(.libraryUnavailable(library: "libavif", reason: reason))
        #expect(error.status == .internalServerError)
        // Never hidden behind a fallback image (that would be cached as the answer).
        #expect(!error.fallsBack)
        #expect(error.publicMessage.contains("libavif") && !error.publicMessage.contains("/usr/lib"), "\(error.publicMessage)")
    }

    /// The error names the library the shim loads: the format's (libtiff for a TIFF), or the one a
    /// caller names (libxml2 for an SVG's budget check and cleaning, where the format's is librsvg).
    @Test func theErrorNamesTheLibraryTheShimLoads() throws {
        #expect(ImageFileType.tiff.lazyLibrary == "libtiff")
        #expect(ImageFileType.svg.lazyLibrary == "librsvg")
        #expect(throws: CodecError.libraryUnavailable(library: "libtiff", reason: "")) {
            _ = try callShim(Data([1]), format: .tiff, messageSize: 8) { _, _, _ in EASEL_LAZY_UNAVAILABLE }
        }
        #expect(throws: CodecError.libraryUnavailable(library: "libxml2", reason: "")) {
            _ = try callShim(Data([1]), format: .svg, library: "libxml2", messageSize: 8) { _, _, _ in EASEL_LAZY_UNAVAILABLE }
        }
    }
}
