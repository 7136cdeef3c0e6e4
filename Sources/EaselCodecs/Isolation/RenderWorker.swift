import EaselSupport
import Foundation

/// The worker side of `RenderWorkers`: what `easel render-worker` runs. It limits itself first
/// (address space, no core files, no network where it can leave it), then answers jobs from its
/// standard input on a private copy of its standard output (descriptor 1 then points at standard
/// error, so a library that prints cannot garble an answer) until its input ends. Each job gets
/// its own CPU limit. A request it cannot read ends the worker: its parent sees the end and
/// replaces it.
public enum RenderWorker {
    /// Serves jobs until standard input ends; returns the process's exit status.
    public static func run(memoryLimit: Int) -> Int32 {
        ProcessLimits.prepareWorkerSignals()
        ProcessLimits.disableCoreFiles()
        _ = ProcessLimits.leaveTheNetwork()
        let output = ProcessLimits.takeStandardOutput()
        if memoryLimit > 0 { ProcessLimits.limitAddressSpace(memoryLimit) }
        while true {
            do {
                guard try serveOne(output: output, memoryLimit: memoryLimit) else { return 0 }
            } catch {
                return 2
            }
        }
    }

    /// Reads one request and writes its answer; false at the end of the input.
    private static func serveOne(output: Int32, memoryLimit: Int) throws -> Bool {
        var header = [UInt8](repeating: 0, count: RenderWire.requestHeaderSize)
        guard try header.withUnsafeMutableBytes({ buffer in try ProcessLimits.readExactly(0, into: buffer) }) else { return false }
        guard let (job, documentBytes, cpuSeconds) = RenderWire.parseRequest(header),
              job.pixelBytes <= max(memoryLimit, 0) || memoryLimit == 0 else { throw Errno.io }
        var document = Data(count: documentBytes)
        guard try document.withUnsafeMutableBytes({ buffer in try ProcessLimits.readExactly(0, into: buffer) }) else {
            return false
        }
        ProcessLimits.limitCPU(seconds: cpuSeconds)
        let pixelBytes = job.pixelBytes
        // Zeroed, as a new bitmap is (the SVG shim draws onto transparent pixels).
        let pixels = pixelBytes > 0 ? calloc(pixelBytes, 1) : nil
        if pixelBytes > 0, pixels == nil {
            let reply = RenderReply(result: 0, message: "no memory for \(pixelBytes) bytes of pixels")
            try send(reply, pixels: nil, pixelBytes: 0, to: output)
            return true
        }
        defer { free(pixels) }
        let reply = document.withUnsafeBytes { job.performHere($0, pixels: pixels) }
        try send(reply, pixels: pixels, pixelBytes: reply.result == 1 ? pixelBytes : 0, to: output)
        return true
    }

    private static func send(_ reply: RenderReply, pixels: UnsafeMutableRawPointer?, pixelBytes: Int, to output: Int32) throws {
        let message = Array(reply.message.utf8.prefix(RenderJob.messageSize))
        let head = RenderWire.reply(reply, message: message, pixelBytes: pixelBytes)
        try head.withUnsafeBytes { bytes in try SystemCalls.writeAll(output, bytes) }
        if let pixels, pixelBytes > 0 {
            try SystemCalls.writeAll(output, UnsafeRawBufferPointer(start: pixels, count: pixelBytes))
        }
    }
}
