import CPDF
import CSVG
import EaselSupport
import Foundation

/// One call into a document renderer we do not control (librsvg, poppler), as a value: what the
/// pool of worker processes is sent (`RenderWorkers`), and what a worker performs
/// (`RenderWorker`). In process or not, the same C function runs with the same arguments.
struct RenderJob: Sendable, Equatable {
    enum Operation: UInt32, Sendable {
        /// `easel_svg_size`: the document's intrinsic size.
        case svgSize = 1
        /// `easel_svg_render` into `width` × `height`.
        case svgRender = 2
        /// `easel_pdf_info`: the page count and page `page`'s size.
        case pdfInfo = 3
        /// `easel_pdf_render` of page `page` into `width` × `height`.
        case pdfRender = 4

        var format: ImageFileType { self == .svgSize || self == .svgRender ? .svg : .pdf }
        var drawsPixels: Bool { self == .svgRender || self == .pdfRender }
    }

    var operation: Operation
    var page: Int32 = 0
    var width: Int32 = 0
    var height: Int32 = 0
    var rowBytes: Int = 0

    /// The bytes of pixels a drawing job writes (`height` rows of `rowBytes`); 0 for the others.
    var pixelBytes: Int { operation.drawsPixels ? Int(height) * rowBytes : 0 }

    /// The message buffer every shim writes its reason into.
    static let messageSize = Int(max(EASEL_SVG_MESSAGE_SIZE, EASEL_PDF_MESSAGE_SIZE))

    /// Runs the job here, in this process, over `bytes`; a drawing job draws into `pixels`
    /// (`pixelBytes` of zeroed memory).
    func performHere(_ bytes: UnsafeRawBufferPointer, pixels: UnsafeMutableRawPointer?) -> RenderReply {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count > 0 else {
            return RenderReply(result: 0, message: "empty or unreadable data")
        }
        var message = [CChar](repeating: 0, count: Self.messageSize)
        var reply = RenderReply(result: 0)
        let count = bytes.count
        message.withUnsafeMutableBufferPointer { buffer in
            let text = buffer.baseAddress!
            let drawn = pixels?.assumingMemoryBound(to: UInt8.self)
            switch operation {
            case .svgSize:
                reply.result = easel_svg_size(base, count, &reply.width, &reply.height, &reply.integer, text)
            case .svgRender:
                reply.result = drawn.map { easel_svg_render(base, count, $0, rowBytes, width, height, text) } ?? 0
            case .pdfInfo, .pdfRender:
                // The PDF budget first, where poppler runs: its scan of hostile bytes is held to the
                // same limits (a worker's memory, CPU and time) as the render it guards.
                var budget = PDFBudget.default.limits
                guard easel_pdf_check_budget(base, count, &budget, text) == 1 else { return }
                reply.result = operation == .pdfInfo
                    ? easel_pdf_info(base, count, page, &reply.integer, &reply.width, &reply.height, text)
                    : drawn.map { easel_pdf_render(base, count, page, $0, rowBytes, width, height, text) } ?? 0
            }
        }
        reply.message = cMessage(message)
        return reply
    }
}

/// What a render job answered: the shim's result and message, and its numbers (a size in
/// `width` and `height`; `integer` is an SVG's "from its viewBox" flag or a PDF's page count).
struct RenderReply: Sendable, Equatable {
    var result: Int32
    var integer: Int32 = 0
    var width = 0.0
    var height = 0.0
    var message = ""
}

/// The bytes that travel between Easel and a worker, little-endian, fixed headers:
///
/// request: magic `EZRQ` (u32), operation (u32), page (i32), width (i32), height (i32), CPU
///          seconds the job may use (u32), row bytes (u64), document bytes (u64); then the
///          document.
/// reply:   magic `EZRP` (u32), result (i32), integer (i32), message bytes (u32), width (f64),
///          height (f64), pixel bytes (u64); then the message (UTF-8), then the pixels (only a
///          drawing job that succeeded sends them, `height × rowBytes` of them).
enum RenderWire {
    static let requestMagic: UInt32 = 0x5152_5A45  // "EZRQ"
    static let replyMagic: UInt32 = 0x5052_5A45  // "EZRP"
    static let requestHeaderSize = 40, replyHeaderSize = 40

    static func request(_ job: RenderJob, documentBytes: Int, cpuSeconds: Int) -> [UInt8] {
        var writer = WireWriter()
        writer.put(requestMagic)
        writer.put(job.operation.rawValue)
        writer.put(UInt32(bitPattern: job.page))
        writer.put(UInt32(bitPattern: job.width))
        writer.put(UInt32(bitPattern: job.height))
        writer.put(UInt32(clamping: cpuSeconds))
        writer.put(UInt64(job.rowBytes))
        writer.put(UInt64(documentBytes))
        return writer.bytes
    }

    /// The job, the document's size and the CPU seconds of a request header; nil when it is not one.
    static func parseRequest(_ bytes: [UInt8]) -> (job: RenderJob, documentBytes: Int, cpuSeconds: Int)? {
        var reader = WireReader(bytes)
        guard reader.u32() == requestMagic, let operation = RenderJob.Operation(rawValue: reader.u32()) else { return nil }
        let page = Int32(bitPattern: reader.u32()), width = Int32(bitPattern: reader.u32()), height = Int32(bitPattern: reader.u32())
        let cpuSeconds = Int(reader.u32())
        let rowBytes = reader.u64(), documentBytes = reader.u64()
        guard rowBytes <= UInt64(Int32.max), documentBytes <= UInt64(Int32.max), width >= 0, height >= 0 else { return nil }
        return (RenderJob(operation: operation, page: page, width: width, height: height, rowBytes: Int(rowBytes)),
                Int(documentBytes), cpuSeconds)
    }

    static func reply(_ reply: RenderReply, message: [UInt8], pixelBytes: Int) -> [UInt8] {
        var writer = WireWriter()
        writer.put(replyMagic)
        writer.put(UInt32(bitPattern: reply.result))
        writer.put(UInt32(bitPattern: reply.integer))
        writer.put(UInt32(message.count))
        writer.put(reply.width.bitPattern)
        writer.put(reply.height.bitPattern)
        writer.put(UInt64(pixelBytes))
        return writer.bytes + message
    }

    /// A reply header's values, the message's and the pixels' byte counts; nil when it is not one.
    static func parseReply(_ bytes: [UInt8]) -> (reply: RenderReply, messageBytes: Int, pixelBytes: Int)? {
        var reader = WireReader(bytes)
        guard reader.u32() == replyMagic else { return nil }
        var reply = RenderReply(result: Int32(bitPattern: reader.u32()))
        reply.integer = Int32(bitPattern: reader.u32())
        let messageBytes = Int(reader.u32())
        reply.width = Double(bitPattern: reader.u64())
        reply.height = Double(bitPattern: reader.u64())
        let pixelBytes = reader.u64()
        guard messageBytes <= RenderJob.messageSize, pixelBytes <= UInt64(Int.max) else { return nil }
        return (reply, messageBytes, Int(pixelBytes))
    }
}

private struct WireWriter {
    var bytes: [UInt8] = []
    mutating func put(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func put(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
}

private struct WireReader {
    let bytes: [UInt8]
    var offset = 0
    init(_ bytes: [UInt8]) { self.bytes = bytes }
    mutating func u32() -> UInt32 { UInt32(truncatingIfNeeded: take(4)) }
    mutating func u64() -> UInt64 { take(8) }
    private mutating func take(_ count: Int) -> UInt64 {
        guard offset + count <= bytes.count else { return 0 }
        var value: UInt64 = 0
        for index in 0..<count { value |= UInt64(bytes[offset + index]) << (8 * index) }
        offset += count
        return value
    }
}
