#if canImport(Glibc)
import EaselSupport
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#endif
import Foundation

/// A blocking TCP client socket on loopback, for tests that need what an HTTP client hides:
/// idle sockets, half-sent requests, HTTP/1.0, reading until the server closes.
/// Blocking: use it from `BlockingIOPool`, never from the cooperative pool.
public final class RawSocket: Sendable {
    public let fd: Int32

    public init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            let code = errno
            close(fd)
            throw POSIXError(.init(rawValue: code) ?? .EIO)
        }
    }

    deinit { close(fd) }

    public func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent == bytes.count else { throw POSIXError(.EPIPE) }
    }

    /// Closes both directions, as a client that leaves.
    public func shutdownBoth() { shutdown(fd, Int32(SHUT_RDWR)) }

    /// How a read ended.
    public enum End: Sendable, Equatable {
        /// The marker arrived (the connection may stay open).
        case marker
        /// The server closed its side cleanly (FIN).
        case closed
        /// The connection was reset (RST): what a client sees as "connection reset by peer".
        case reset
        /// The deadline passed.
        case timedOut
        /// Another error (its errno): EPIPE, ETIMEDOUT…
        case failed(Int32)
    }

    /// Reads until `marker` has arrived, the server closes or resets the connection, or
    /// `deadline` passes (nil marker: until closed).
    public func read(until marker: String?, within deadline: Duration) -> (text: String, end: End) {
        let end = ContinuousClock.now + deadline
        var received = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while ContinuousClock.now < end {
            if let marker, String(decoding: received, as: UTF8.self).contains(marker) { return (String(decoding: received, as: UTF8.self), .marker) }
            let left = end - ContinuousClock.now
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(max(1, left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000)))
            if ready <= 0 { continue }
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 {
                let code = errno
                if code == EINTR || code == EAGAIN { continue }
                return (String(decoding: received, as: UTF8.self), code == ECONNRESET ? .reset : .failed(code))
            }
            if count == 0 { return (String(decoding: received, as: UTF8.self), .closed) }
            received += buffer[..<count]
        }
        if let marker, String(decoding: received, as: UTF8.self).contains(marker) { return (String(decoding: received, as: UTF8.self), .marker) }
        return (String(decoding: received, as: UTF8.self), .timedOut)
    }

    /// Sends without failing on a connection the server has closed (returns whether all went).
    @discardableResult
    public func trySend(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
    }

    /// Reads until the server closes the connection or `deadline` passes; returns what arrived
    /// and whether the server closed.
    public func readUntilClosed(within deadline: Duration) -> (text: String, closed: Bool) {
        let end = ContinuousClock.now + deadline
        var received = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while ContinuousClock.now < end {
            let left = end - ContinuousClock.now
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(max(1, left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000)))
            if ready <= 0 { continue }
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return (String(decoding: received, as: UTF8.self), true) }
            received += buffer[..<count]
        }
        return (String(decoding: received, as: UTF8.self), false)
    }
}

/// Runs `body` on a thread of its own (not a pool's): for long blocking waits in tests that
/// must not hold up other suites' pool work.
public func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
