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
        let process = Process()
        let python = Self.python
        process.executableURL = URL(fileURLWithPath: python)
        let script = repositoryRoot().appendingPathComponent("scripts/s3-test-server.py").path
        process.arguments = python == "/usr/bin/env" ? ["python3", script, bucket] : [script, bucket]
        let input = ChildProcesses.pipe(), output = ChildProcesses.pipe()
        process.standardInput = input
        process.standardOutput = output
        try ChildProcesses.run(process)
        // Kept open for the life of this process: the server stops when it closes.
        keep.withLock { $0 = input }
        var buffer = Data()
        let handle = output.fileHandleForReading
        while !buffer.contains(UInt8(ascii: "\n")) {
            let chunk = handle.availableData
            guard !chunk.isEmpty else {
                throw S3TestServerError("scripts/s3-test-server.py exited before it was ready (is moto[server] installed? run `make deps`)")
            }
            buffer.append(chunk)
        }
        let line = buffer.prefix { $0 != UInt8(ascii: "\n") }
        guard let fields = try JSONSerialization.jsonObject(with: Data(line)) as? [String: String],
              let endpoint = fields["endpoint"].flatMap(URL.init(string:)), let accessKey = fields["accessKey"],
              let secretKey = fields["secretKey"], let region = fields["region"] else {
            throw S3TestServerError("unexpected first line from scripts/s3-test-server.py: \(String(decoding: line, as: UTF8.self))")
        }
        return S3TestServer(endpoint: endpoint, accessKey: accessKey, secretKey: secretKey, region: region)
    }

    private static let keep = Locked<Pipe?>(nil)
}

public struct S3TestServerError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
