#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import CPlatform

// Worker processes (the out-of-process renderers): spawning with pipes, waiting for an answer
// with a deadline, killing and reaping, and the limits a worker puts on itself. Part of the
// platform layer, the only code that imports the C library.

/// A child process started with its standard input and output on pipes to this process.
package struct ChildProcess: Sendable {
    /// The child's process ID.
    package let pid: Int32
    /// Where this process writes the child's standard input.
    package let input: Int32
    /// Where this process reads the child's standard output.
    package let output: Int32

    /// How a child ended.
    package enum Ending: Equatable, Sendable, CustomStringConvertible {
        case exited(Int32)
        case signalled(Int32)

        package var description: String {
            switch self {
            case .exited(let code): "exited with status \(code)"
            case .signalled(let signal): "stopped by signal \(signal) (\(ChildProcess.signalName(signal)))"
            }
        }
    }

    /// Starts `executable` with `arguments` (the first is not the program's name: that is added),
    /// its standard input and output on new pipes, its standard error on `/dev/null`, and every
    /// other descriptor of this process closed in it (the pipes are made close-on-exec
    /// atomically, so no other child, started by another thread meanwhile, inherits them).
    /// Writing to a child that died is an `EPIPE` error, not a signal: `SIGPIPE` is ignored in
    /// this process from the first spawn on (a server must never die of a child's death).
    package static func spawn(executable: String, arguments: [String]) throws(Errno) -> ChildProcess {
        let toChild = try pipe()
        let fromChild: (read: Int32, write: Int32)
        do { fromChild = try pipe() } catch {
            _ = cCloseDescriptor(toChild.read); _ = cCloseDescriptor(toChild.write)
            throw error
        }
        // The child's ends are its own now (spawn duplicated them), this process's are kept.
        defer { _ = cCloseDescriptor(toChild.read); _ = cCloseDescriptor(fromChild.write) }
        do {
            let pid = try spawn(executable: executable, arguments: arguments, input: toChild.read, output: fromChild.write, error: nil)
            return ChildProcess(pid: pid, input: toChild.write, output: fromChild.read)
        } catch {
            _ = cCloseDescriptor(toChild.write); _ = cCloseDescriptor(fromChild.read)
            throw error
        }
    }

    /// Starts `executable` with `arguments` and the given descriptors as its standard input,
    /// output and error (nil: `/dev/null`), every other descriptor of this process closed in it,
    /// no signal blocked and every signal's default action; returns its ID.
    package static func spawn(executable: String, arguments: [String], input: Int32, output: Int32, error: Int32?) throws(Errno) -> Int32 {
        ignoreBrokenPipes
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // dup2 clears close-on-exec on the copies only.
        posix_spawn_file_actions_adddup2(&actions, input, 0)
        posix_spawn_file_actions_adddup2(&actions, output, 1)
        if let error {
            posix_spawn_file_actions_adddup2(&actions, error, 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }
        _ = easel_spawn_close_from(&actions, 3)
        var attributes = posix_spawnattr_t()
        _ = easel_spawnattr_clean(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        guard result == 0 else { throw Errno(result) }
        return pid
    }

    /// A pipe whose both ends are close-on-exec from the start: (read, write).
    package static func pipe() throws(Errno) -> (read: Int32, write: Int32) {
        var ends: [Int32] = [-1, -1]
        guard easel_pipe_cloexec(&ends) == 0 else { throw Errno.current }
        return (ends[0], ends[1])
    }

    /// Waits for process `pid` to end, `milliseconds` at most (polled every 10 ms); true when it did.
    package static func waitForExit(_ pid: Int32, milliseconds: Int) -> Bool {
        var status: Int32 = 0
        for _ in 0...(max(0, milliseconds) / 10) {
            if waitpid(pid, &status, WNOHANG) == pid { return true }
            usleep(10_000)
        }
        return false
    }

    /// Kills the child (SIGKILL), closes this side's pipes and reaps it.
    @discardableResult
    package func kill() -> Ending? {
        _ = cKill(pid, SIGKILL)
        return close()
    }

    /// Closes this side's pipes (a worker reading its input then sees the end and exits) and
    /// waits for the child to end.
    @discardableResult
    package func close() -> Ending? {
        _ = cCloseDescriptor(input)
        _ = cCloseDescriptor(output)
        return reap()
    }

    /// Waits for the child to end (it has, or is about to: its output reached its end, or it was
    /// killed) and says how.
    package func reap() -> Ending? {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { return nil }
        }
        // WIFEXITED / WTERMSIG are macros: their bit layout, as glibc defines it.
        let signal = status & 0x7F
        return signal == 0 ? .exited((status >> 8) & 0xFF) : .signalled(signal)
    }

    /// Waits until the child's output can be read (or has reached its end), `milliseconds` at
    /// most: true when it can.
    package func waitForOutput(milliseconds: Int32) throws(Errno) -> Bool {
        var descriptor = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, milliseconds)
        if ready < 0 { return errno == EINTR ? false : try { () throws(Errno) -> Bool in throw Errno.current }() }
        return ready > 0
    }

    /// Reads up to `buffer.count` bytes of the child's output that are there now (at least one,
    /// unless the output has ended: then 0).
    package func readAvailable(into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        while true {
            let count = cRead(output, buffer.baseAddress, buffer.count)
            if count >= 0 { return count }
            if errno != EINTR { throw Errno.current }
        }
    }

    /// Writes all of `buffer` to the child's input.
    package func write(_ buffer: UnsafeRawBufferPointer) throws(Errno) {
        try SystemCalls.writeAll(input, buffer)
    }

    static func signalName(_ signal: Int32) -> String {
        switch signal {
        case SIGKILL: "SIGKILL"
        case SIGSEGV: "SIGSEGV"
        case SIGABRT: "SIGABRT"
        case SIGBUS: "SIGBUS"
        case SIGXCPU: "SIGXCPU"
        case SIGILL: "SIGILL"
        case SIGTRAP: "SIGTRAP"
        case SIGFPE: "SIGFPE"
        default: "signal \(signal)"
        }
    }

    /// Whether `ending` is the one a CPU limit (`ProcessLimits.limitCPU`) gives.
    package static func isCPULimit(_ ending: Ending?) -> Bool { ending == .signalled(SIGXCPU) }

    private static let ignoreBrokenPipes: Void = { _ = signal(SIGPIPE, SIG_IGN) }()
}

/// The limits a worker process puts on itself before it reads any work.
package enum ProcessLimits {
    /// At most `bytes` of address space (`RLIMIT_AS`): past it an allocation fails. Under a
    /// sanitizer (whose runtime reserves terabytes of address space) the resident memory is
    /// watched instead, and the process kills itself (SIGKILL) past it.
    package static func limitAddressSpace(_ bytes: Int) {
        if easel_is_sanitized() != 0 {
            _ = easel_watch_resident_memory(bytes)
            return
        }
        var limit = rlimit(rlim_cur: rlim_t(bytes), rlim_max: rlim_t(bytes))
        _ = setrlimit(resourceAddressSpace, &limit)
    }

    /// At most `seconds` more CPU time from now (`RLIMIT_CPU`'s soft limit: past it the kernel
    /// sends SIGXCPU, which ends the process). A worker sets it before each job.
    package static func limitCPU(seconds: Int) {
        _ = easel_limit_cpu(seconds)
    }

    /// A worker's signals: none blocked (so SIGXCPU ends it), and SIGKILL when its parent dies.
    package static func prepareWorkerSignals() { easel_worker_signals() }

    /// Ignores SIGINT, SIGTERM and SIGHUP: a process that must end with its input, not before.
    package static func ignoreTerminationSignals() { easel_ignore_termination_signals() }

    /// No core files: a worker that crashes on a hostile document leaves nothing on disk.
    package static func disableCoreFiles() {
        var limit = rlimit(rlim_cur: 0, rlim_max: 0)
        _ = setrlimit(resourceCore, &limit)
    }

    /// Best effort: a network namespace of the process's own, with no interface but a loopback
    /// that is down, so that nothing it does reaches a network. Needs privileges (or user
    /// namespaces) the process may not have; false when it could not.
    package static func leaveTheNetwork() -> Bool {
        easel_leave_network() == 0
    }

    /// Moves this process's standard output to a new descriptor that it returns, and points
    /// descriptor 1 at standard error: a library that prints can no longer corrupt what the
    /// process writes on the returned descriptor.
    package static func takeStandardOutput() -> Int32 {
        let descriptor = dup(1)
        _ = dup2(2, 1)
        return descriptor
    }

    /// Makes `descriptor` this process's standard error (and closes `descriptor`).
    package static func replaceStandardError(with descriptor: Int32) {
        _ = dup2(descriptor, 2)
        _ = cCloseDescriptor(descriptor)
    }

    /// A copy of this process's standard error, close-on-exec.
    package static func copyOfStandardError() -> Int32 { fcntl(2, F_DUPFD_CLOEXEC, 3) }

    /// Points standard error at /dev/null (its earlier target closed here).
    package static func silenceStandardError() {
        let null = open("/dev/null", O_WRONLY | O_CLOEXEC)
        if null >= 0 { replaceStandardError(with: null) }
    }

    /// Reads exactly `buffer.count` bytes from `descriptor`; false when its input ended first.
    package static func readExactly(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Bool {
        var total = 0
        while total < buffer.count {
            let count = read(descriptor, buffer.baseAddress! + total, buffer.count - total)
            if count < 0 {
                if errno == EINTR { continue }
                throw Errno.current
            }
            if count == 0 { return false }
            total += count
        }
        return true
    }

    #if canImport(Glibc)
    private static let resourceAddressSpace = __rlimit_resource_t(RLIMIT_AS.rawValue)
    private static let resourceCore = __rlimit_resource_t(RLIMIT_CORE.rawValue)
    #else
    private static let resourceAddressSpace = RLIMIT_AS
    private static let resourceCore = RLIMIT_CORE
    #endif
}

private func cKill(_ pid: pid_t, _ signal: Int32) -> Int32 { kill(pid, signal) }
private func cCloseDescriptor(_ descriptor: Int32) -> Int32 { close(descriptor) }
private func cRead(_ descriptor: Int32, _ pointer: UnsafeMutableRawPointer?, _ count: Int) -> Int { read(descriptor, pointer, count) }
