import EaselCodecs
import EaselPipeline

/// Any URL style's option string as a plan, for callers outside a server (`easel thumbnail
/// --imgproxy`, `--thumbor`): the very parsers the routes use, so a batch job makes
/// what the server serves. No source is read; presets and signatures are the server's business.
public enum PlanParsing {
    /// A plan and the output quality its style uses when the options name none.
    public struct Parsed: Sendable {
        /// The plan the options make.
        public var plan: ImagePlan
        /// The style's quality when the options name none (imgproxy's and thumbor's: 80).
        public var defaultQuality: Int?
    }

    /// imgproxy's processing options, as between the signature and the source
    /// (`rs:fill:300:200/g:sm/q:90`). A refusal is a `PlanParsing.Refused` naming the option.
    public static func imgproxy(_ options: String) throws -> Parsed {
        let url = try refusing { try ImgproxyURL.parse(Substring("/insecure/\(options)/plain/local:///source"), presets: [:]) }
        return Parsed(plan: url.options, defaultQuality: ImgproxyURL.defaultQuality)
    }

    /// thumbor's options, as between the signature and the image (`300x200/smart/filters:grayscale()`).
    public static func thumbor(_ options: String) throws -> Parsed {
        let url = try refusing { try ThumborURL.parse(Substring("/unsafe/\(options)/source")) }
        // A segment thumbor does not know would have been read as part of the image's path.
        guard url.sourceText == "source" else {
            throw Refused(description: "not thumbor options: \(url.sourceText.dropLast("/source".count))")
        }
        return Parsed(plan: url.options, defaultQuality: ThumborURL.defaultQuality)
    }

    /// Why an option string was refused (what the server answers with a 4xx).
    public struct Refused: Error, CustomStringConvertible {
        /// The refusal, naming the option or limit.
        public let description: String
        /// A refusal with this text.
        public init(description: String) { self.description = description }
    }

    private static func refusing<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as RequestError {
            throw Refused(description: error.message)
        } catch let error as PlanError {
            throw Refused(description: error.description)
        }
    }
}
