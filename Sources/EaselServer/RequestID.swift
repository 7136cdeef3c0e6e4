import HTTPTypes
import Logging
import Synchronization

/// `X-Request-ID` on every answer and in every log line about a request: the client's (or a
/// proxy's) when it sends a usable one, else a new one, so a line in a log can be matched to the
/// answer a user reports and to the logs of the proxy in front.
public enum RequestID {
    /// The `X-Request-ID` header field, read from requests and written on answers.
    public static let field = HTTPField.Name("X-Request-ID")!

    /// The longest ID taken from a request; a longer one is replaced.
    public static let maximumLength = 128

    /// The client's ID when it is usable: 1–128 visible ASCII characters other than quotes and
    /// backslashes (it goes into headers and JSON logs as it is); nil otherwise.
    public static func accepted(_ value: String?) -> String? {
        guard let value, !value.isEmpty, value.utf8.count <= maximumLength,
              value.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) else {
            return nil
        }
        return value
    }

    /// The ID of the request the current task works for (set around each request's handling):
    /// `metadataProvider` puts it in every log line written meanwhile, from any logger.
    @TaskLocal public static var current: String?

    /// Adds `request_id` to every log line written while a request is handled (pass it to
    /// `LoggingSystem.bootstrap`).
    public static let metadataProvider = Logger.MetadataProvider { () -> Logger.Metadata in
        guard let id = current else { return [:] }
        return ["request_id": .string(id)]
    }

    /// The request's ID: its own when usable, else a new one.
    public static func of(_ fields: HTTPFields) -> String { accepted(fields[field]) ?? make() }

    /// 64 random bits drawn once per process, and a count: IDs unique within the process and
    /// unlikely to repeat across processes, at the price of one atomic add (no system call per
    /// request; the warm path makes one for every answer).
    private static let prefix = UInt64.random(in: .min ... .max)
    private static let counter = Atomic<UInt64>(0)

    /// A new ID: 32 lowercase hex digits, the process's random prefix then a count.
    public static func make() -> String {
        let count = counter.wrappingAdd(1, ordering: .relaxed).newValue
        return String(unsafeUninitializedCapacity: 32) { buffer in
            let digits: StaticString = "0123456789abcdef"
            digits.withUTF8Buffer { digits in
                for (offset, value) in [(0, prefix), (16, count)] {
                    var bits = value
                    for i in (0..<16).reversed() {
                        buffer[offset + i] = digits[Int(bits & 0xF)]
                        bits >>= 4
                    }
                }
            }
            return 32
        }
    }
}
