import EaselRemote
import Foundation

/// The Swift side of peers/shared-tier.sh: times `S3Store` lookups against the S3 endpoint in
/// the environment (AWS_*, EASEL_S3_ENDPOINT), one at a time: misses (keys never written) and
/// hits (a 20 KB value, about a 256 px JPEG). Prints one JSON line of per-call seconds.
///
///     SharedTierLookup BUCKET COUNT
@main
struct SharedTierLookup {
    static func main() async throws {
        let arguments = CommandLine.arguments
        guard arguments.count == 3, let count = Int(arguments[2]) else {
            FileHandle.standardError.write(Data("usage: SharedTierLookup BUCKET COUNT\n".utf8))
            exit(2)
        }
        let client = S3Client(configuration: try .fromEnvironment(ProcessInfo.processInfo.environment))
        let store = S3Store(location: S3Location(bucket: arguments[1], prefix: "lookup-\(UUID().uuidString)/"), client: client)
        let value = Data((0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try await store.set(value, forKey: "1:x|hit", expiresAt: nil)
        _ = try await store.data(forKey: "1:x|warm")  // the connection is open before timing
        var misses: [Double] = [], hits: [Double] = []
        for index in 0..<count {
            var start = ContinuousClock.now
            guard try await store.data(forKey: "\(String(index).utf8.count):\(index)|miss") == nil else { fatalError("a hit") }
            misses.append(seconds(ContinuousClock.now - start))
            start = ContinuousClock.now
            guard try await store.data(forKey: "1:x|hit") == value else { fatalError("a miss") }
            hits.append(seconds(ContinuousClock.now - start))
        }
        try await client.shutdown()
        let json = try JSONSerialization.data(withJSONObject: ["miss": misses, "hit": hits])
        FileHandle.standardOutput.write(json + Data("\n".utf8))
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
