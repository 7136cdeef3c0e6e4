import EaselSupport
import Foundation

/// moto's S3 server on 127.0.0.1 with signatures enforced (`scripts/s3-test-server.py`), one per
/// test process, started on first use. It creates the bucket `easel-test`; tests keep apart by
/// key prefix. The server exits when this process does (its stdin closes).
///
/// Python: `$EASEL_PYTHON`, else the virtualenv `make deps` makes (`.venv-tools/`), else
/// `python3`. moto missing is a failure, not a skip: `make test` installs it.
public struct S3TestServer: Sendable {
    public let endpoint: URL
    public let accessKey: String
    public let secretKey: String
    public let region: String
    public static let bucket = "easel-test"

    /// The environment a server or client reads its S3 settings from.
    public var environment: [String: String] {
        ["AWS_ACCESS_KEY_ID": accessKey, "AWS_SECRET_ACCESS_KEY": secretKey, "AWS_REGION": region,
         "EASEL_S3_ENDPOINT": endpoint.absoluteString]
    }

    public static func shared() async throws -> S3TestServer { try await starter.value }

    private static let starter = Task<S3TestServer, any Error> {
        try await BlockingIOPool.shared.run { try start() }
    }

    /// The repository's root (this file is Tests/EaselTestSupport/S3TestServer.swift).
    public static func repositoryRoot(file: String = #filePath) -> URL {
        URL(fileURLWithPath: file).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    public static var python: String {
        if let configured = ProcessInfo.processInfo.environment["EASEL_PYTHON"], !configured.isEmpty { return configured }
        let venv = repositoryRoot().appendingPathComponent(".venv-tools/bin/python3").path
        return FileManager.default.isExecutableFile(atPath: venv) ? venv : "/usr/bin/env"
    }

    private static func start() throws -> S3TestServer {
        let service = try ScriptService(script: "scripts/s3-test-server.py", arguments: [bucket],
                                        needs: "is moto[server] installed? run `make deps`")
        // Kept open for the life of this process: the server stops when it closes.
        keep.withLock { $0 = service }
        let fields = service.announcement
        guard let endpoint = fields["endpoint"].flatMap(URL.init(string:)), let accessKey = fields["accessKey"],
              let secretKey = fields["secretKey"], let region = fields["region"] else {
            throw S3TestServerError("unexpected first line from scripts/s3-test-server.py: \(fields)")
        }
        return S3TestServer(endpoint: endpoint, accessKey: accessKey, secretKey: secretKey, region: region)
    }

    private static let keep = Locked<ScriptService?>(nil)
}

/// A Python script of `scripts/` run as a loopback service for tests (`S3TestServer.python`):
/// it announces itself with a first line of standard output, a JSON object of strings, and runs
/// until its standard input closes (`stop()`, or the test process ending).
public final class ScriptService: Sendable {
    public let process: Process
    /// The first line the script printed.
    public let announcement: [String: String]
    private let input: Pipe

    /// Blocking: starts `script` (relative to the repository) and reads its announcement;
    /// `needs` says what to install when it exits before announcing.
    public init(script: String, arguments: [String], needs: String) throws {
        process = Process()
        let python = S3TestServer.python
        process.executableURL = URL(fileURLWithPath: python)
        let path = S3TestServer.repositoryRoot().appendingPathComponent(script).path
        process.arguments = (python == "/usr/bin/env" ? ["python3", path] : [path]) + arguments
        input = ChildProcesses.pipe()
        let output = ChildProcesses.pipe()
        process.standardInput = input
        process.standardOutput = output
        try ChildProcesses.run(process)
        var buffer = Data()
        while !buffer.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { throw S3TestServerError("\(script) exited before it was ready (\(needs))") }
            buffer.append(chunk)
        }
        let line = buffer.prefix { $0 != UInt8(ascii: "\n") }
        guard let fields = try JSONSerialization.jsonObject(with: Data(line)) as? [String: String] else {
            throw S3TestServerError("unexpected first line from \(script): \(String(decoding: line, as: UTF8.self))")
        }
        announcement = fields
    }

    /// Blocking: closes the script's standard input and waits for it to exit.
    public func stop() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}

public struct S3TestServerError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
