@testable import EaselCodecs
import EaselSupport
import EaselTestSupport
import Foundation
import Testing

/// Hostile documents made at test time (a few lines each), shared by the codec and server tests.
enum HostileDocuments {
    /// librsvg 2.54 panics on this kernel (nalgebra's "dimension mismatch"): an abort.
    static let convolution = Data("""
        <svg xmlns="http://www.w3.org/2000/svg" width="100" height="100"><filter id="f">\
        <feConvolveMatrix order="22" kernelMatrix="\(Array(repeating: "1", count: 484).joined(separator: " "))"/></filter>\
        <rect width="100" height="100" fill="red" filter="url(#f)"/></svg>
        """.utf8)
    /// A selector nested 3,000 deep: librsvg's CSS parser overflows its stack (SIGSEGV).
    static let nestedSelectors = Data(("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"100\" height=\"100\"><style>"
        + String(repeating: ":not(", count: 3000) + "a" + String(repeating: ")", count: 3000)
        + "{fill:red}</style><rect width=\"100\" height=\"100\"/></svg>").utf8)
    /// A font Pango cannot make.
    static let hugeFont = Data(#"<svg xmlns="http://www.w3.org/2000/svg" width="100" height="100"><text font-size="1e9" y="50">A</text></svg>"#.utf8)
    /// Turbulence by the billion octaves: a render that never ends.
    static let octaves = Data("""
        <svg xmlns="http://www.w3.org/2000/svg" width="500" height="500"><filter id="t">\
        <feTurbulence baseFrequency="0.05" numOctaves="1000000000"/></filter><rect width="500" height="500" filter="url(#t)"/></svg>
        """.utf8)
    /// 400,000 glyphs of text.
    static let text = Data(("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"100\" height=\"100\"><text y=\"50\">"
        + String(repeating: "W", count: 400_000) + "</text></svg>").utf8)
    /// Masks nested in masks, each the size of the render.
    static let masks: Data = {
        var body = "<rect width=\"100\" height=\"100\" fill=\"white\"/>"
        var defs = ""
        for index in 0..<100 {
            defs += "<mask id=\"m\(index)\">\(index == 0 ? body : "<rect width=\"100\" height=\"100\" fill=\"white\" mask=\"url(#m\(index - 1))\"/>")</mask>"
        }
        body = "<rect width=\"100\" height=\"100\" mask=\"url(#m99)\"/>"
        return Data("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"100\" height=\"100\"><defs>\(defs)</defs>\(body)</svg>".utf8)
    }()
    /// Within every budget, but slow: 150 filter primitives of 10 octaves each (over a minute of
    /// CPU at 2000×2000).
    static let slow = Data(("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"100\" height=\"100\"><filter id=\"f\" x=\"0\" y=\"0\" width=\"1\" height=\"1\">"
        + (0..<150).map { "<feTurbulence baseFrequency=\"0.0\($0 % 9 + 1)\" numOctaves=\"10\" seed=\"\($0)\" result=\"t\($0)\"/>" }.joined()
        + "</filter><rect width=\"100\" height=\"100\" filter=\"url(#f)\"/></svg>").utf8)
    /// A plain drawing: a blue rectangle on the left half.
    static let plain = Data(##"<svg xmlns="http://www.w3.org/2000/svg" width="100" height="50"><rect width="50" height="50" fill="#00f"/></svg>"##.utf8)

    /// A PDF whose page draws a form that draws the next one 8 times, 12 deep (8^12 fills).
    static let nestedForms: Data = {
        var objects = [Data("<< /Type /Catalog /Pages 2 0 R >>".utf8), Data("<< /Type /Pages /Kids [3 0 R] /Count 1 >>".utf8),
                       Data("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R /Resources << /XObject << /X 5 0 R >> >> >>".utf8),
                       stream("/X Do")]
        for level in 0..<12 {
            if level < 11 {
                objects.append(stream(Array(repeating: "q 0.9 0 0 0.9 1 1 cm /X Do Q", count: 8).joined(separator: " "),
                                      extra: "/Type /XObject /Subtype /Form /BBox [0 0 200 200] /Resources << /XObject << /X \(6 + level) 0 R >> >>"))
            } else {
                objects.append(stream("0 0 1 rg 0 0 200 200 re f", extra: "/Type /XObject /Subtype /Form /BBox [0 0 200 200]"))
            }
        }
        return pdf(objects)
    }()
    /// A page of two million `q` (saved graphics states, never restored).
    static let saves = pdf([Data("<< /Type /Catalog /Pages 2 0 R >>".utf8), Data("<< /Type /Pages /Kids [3 0 R] /Count 1 >>".utf8),
                            Data("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R >>".utf8),
                            stream(String(repeating: "q ", count: 2_000_000), compressed: true)])

    /// A stream object: its dictionary (with `extra`) and its content, FlateDecode when `compressed`.
    static func stream(_ content: String, extra: String = "", compressed: Bool = false) -> Data {
        let bytes = compressed ? zlibCompress(Data(content.utf8)) : Data(content.utf8)
        return Data("<< /Length \(bytes.count) \(compressed ? "/Filter /FlateDecode " : "")\(extra) >>\nstream\n".utf8) + bytes
            + Data("\nendstream".utf8)
    }

    /// A PDF file of `objects` (numbered from 1), with its cross-reference table.
    static func pdf(_ objects: [Data]) -> Data {
        var out = Data("%PDF-1.4\n".utf8)
        var offsets: [Int] = []
        for (index, body) in objects.enumerated() {
            offsets.append(out.count)
            out += Data("\(index + 1) 0 obj\n".utf8) + body + Data("\nendobj\n".utf8)
        }
        let xref = out.count
        out += Data("xref\n0 \(objects.count + 1)\n0000000000 65535 f \n".utf8)
        for offset in offsets { out += Data(String(format: "%010d 00000 n \n", offset).utf8) }
        out += Data("trailer\n<< /Size \(objects.count + 1) /Root 1 0 R >>\nstartxref\n\(xref)\n%%EOF\n".utf8)
        return out
    }

    /// zlib's format (RFC 1950) around deflate's stored blocks: valid FlateDecode that any
    /// inflater reads, made without a compression library (the 4 MB page stays 4 MB here; the
    /// budget is what refuses it, not its file size).
    static func zlibCompress(_ data: Data) -> Data {
        var out = Data([0x78, 0x01])
        let bytes = [UInt8](data)
        var index = 0
        repeat {
            let count = min(65_535, bytes.count - index)
            let last: UInt8 = index + count >= bytes.count ? 1 : 0
            out.append(last)
            out.append(UInt8(count & 0xFF)); out.append(UInt8(count >> 8))
            out.append(UInt8(~count & 0xFF)); out.append(UInt8((~count >> 8) & 0xFF))
            out.append(contentsOf: bytes[index..<(index + count)])
            index += count
        } while index < bytes.count
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in bytes { a = (a + UInt32(byte)) % 65_521; b = (b + a) % 65_521 }
        let adler = (b << 16) | a
        out.append(contentsOf: [UInt8(adler >> 24), UInt8((adler >> 16) & 0xFF), UInt8((adler >> 8) & 0xFF), UInt8(adler & 0xFF)])
        return out
    }
}

/// The render workers (`RenderIsolation`): a renderer that crashes, hangs or bloats costs one
/// render, never the process that asked; a cancelled render's worker is killed at once. These
/// call the pool with their own isolation (not the process-wide setting other tests use) and
/// skip the parse-time budgets, which would refuse these documents first. One test at a time: the
/// cancellation test counts the pool's workers.
@Suite("Render workers", .serialized, .timeLimit(.minutes(2)))
struct RenderIsolationTests {
    static func isolation(cpu: Int = 20, time: Duration = .seconds(30), memory: Int = 1 << 30) -> RenderIsolation {
        RenderIsolation(executable: builtProduct("easel").path, memoryLimit: memory, cpuSecondsPerJob: cpu, timeLimit: time)
    }

    /// An SVG drawn at `width`×`height` in a worker, past every budget.
    static func render(_ document: Data, width: Int = 100, height: Int = 100, isolation: RenderIsolation) throws -> Bitmap {
        var bitmap = Bitmap(width: width, height: height, pixelFormat: .rgba8)
        let job = RenderJob(operation: .svgRender, width: Int32(width), height: Int32(height), rowBytes: bitmap.rowBytes)
        let reply = try bitmap.withUnsafeMutableBytes { pixels in
            try RenderWorkers.shared.perform(job, document: document, pixels: pixels.baseAddress, isolation: isolation)
        }
        guard reply.result == 1 else { throw CodecError.corrupt(format: .svg, reason: reply.message) }
        return bitmap
    }

    static func failure(_ body: () throws -> Bitmap) -> CodecError? {
        do { _ = try body(); return nil } catch { return error as? CodecError ?? .invalidParameters("\(error)") }
    }

    @Test func aRendererThatCrashesCostsOneRenderAndTheNextRenderWorks() throws {
        let isolation = Self.isolation()
        for (document, signal) in [(HostileDocuments.convolution, "SIGABRT"), (HostileDocuments.nestedSelectors, "SIGSEGV")] {
            let error = Self.failure { try Self.render(document, isolation: isolation) }
            guard case .renderFailed(.svg, let reason) = error else { Issue.record("\(String(describing: error))"); continue }
            #expect(reason.contains(signal), "\(reason)")
        }
        // This process is alive, and a new worker draws the next document.
        let drawn = try Self.render(HostileDocuments.plain, width: 100, height: 50, isolation: isolation)
        drawn.withUnsafeBytes { pixels in
            #expect(Array(pixels[0..<4]) == [0, 0, 255, 255], "blue on the left")
            #expect(pixels[drawn.rowBytes * 25 + 75 * 4 + 3] == 0, "transparent on the right")
        }
    }

    @Test func aRenderPastItsCPULimitIsStoppedByTheKernel() {
        let error = Self.failure { try Self.render(HostileDocuments.octaves, isolation: Self.isolation(cpu: 1)) }
        guard case .renderFailed(.svg, let reason) = error else { Issue.record("\(String(describing: error))"); return }
        #expect(reason.contains("more than 1 s of CPU"), "\(reason)")
    }

    @Test func aRenderPastItsTimeLimitIsKilled() {
        let start = ContinuousClock.now
        let error = Self.failure {
            try Self.render(HostileDocuments.octaves, isolation: Self.isolation(time: .milliseconds(500)))
        }
        guard case .renderFailed(.svg, let reason) = error else { Issue.record("\(String(describing: error))"); return }
        #expect(reason.contains("took longer than"), "\(reason)")
        #expect(ContinuousClock.now - start < .seconds(5))
    }

    @Test func aRendererPastItsMemoryLimitCostsOneRender() {
        let pdf = HostileDocuments.saves
        var bitmap = Bitmap(width: 200, height: 200, pixelFormat: .rgba8)
        let job = RenderJob(operation: .pdfRender, width: 200, height: 200, rowBytes: bitmap.rowBytes)
        let isolation = Self.isolation(memory: 384 << 20)
        var error: CodecError?
        bitmap.withUnsafeMutableBytes { pixels in
            do { _ = try RenderWorkers.shared.perform(job, document: pdf, pixels: pixels.baseAddress, isolation: isolation) } catch let failure {
                error = failure as? CodecError
            }
        }
        guard case .renderFailed(.pdf, let reason) = error else { Issue.record("\(String(describing: error))"); return }
        #expect(reason.contains("memory limit"), "\(reason)")
    }

    @Test func aCancelledRenderKillsItsWorkerAtOnce() async throws {
        let isolation = Self.isolation()
        let (startedBefore, failedBefore) = RenderIsolation.statistics
        let task = Task {
            try await BlockingIOPool.shared.performCancellable { () throws -> Bitmap in
                try Self.render(HostileDocuments.octaves, isolation: isolation)
            }
        }
        // Cancelled once its worker runs (bounded: 30 s at most for the spawn).
        let deadline = ContinuousClock.now + .seconds(30)
        while RenderIsolation.statistics.started == startedBefore, ContinuousClock.now < deadline { await Task.yield() }
        let cancelled = ContinuousClock.now
        task.cancel()
        let result = await task.result
        #expect(ContinuousClock.now - cancelled < .seconds(2), "the render stopped within 2 s of its cancellation")
        guard case .failure(let error) = result else { Issue.record("the render finished"); return }
        #expect(error as? CodecError == .cancelled)
        #expect(RenderIsolation.statistics.started == startedBefore + 1, "the render had started in a worker")
        #expect(RenderIsolation.statistics.failed == failedBefore + 1, "its worker was killed and reaped")
    }

    @Test func theBudgetsRefuseEachAttackBeforeAnyRenderer() {
        let refusals: [(Data, String)] = [
            (HostileDocuments.convolution, "feConvolveMatrix of order 22"), (HostileDocuments.nestedSelectors, "CSS nested"),
            (HostileDocuments.hugeFont, "font size"), (HostileDocuments.octaves, "octaves"), (HostileDocuments.text, "bytes of text"),
            (HostileDocuments.masks, "masks"),
        ]
        for (document, named) in refusals {
            let error = Self.failure { try ImageDecoder.decode(document, covering: (64, 64)) }
            guard case .corrupt(.svg, let reason) = error else { Issue.record("\(named): \(String(describing: error))"); continue }
            #expect(reason.contains(named) && reason.contains("limit"), "\(reason)")
        }
        for (document, named) in [(HostileDocuments.nestedForms, "operators"), (HostileDocuments.saves, "(q)")] {
            let error = Self.failure { try ImageDecoder.decode(document, covering: (64, 64)) }
            guard case .corrupt(.pdf, let reason) = error else { Issue.record("\(named): \(String(describing: error))"); continue }
            #expect(reason.contains(named) && reason.contains("limit"), "\(reason)")
        }
    }
}
