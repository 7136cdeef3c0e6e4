import EaselCodecs
import EaselPipeline
import Hummingbird
import HTTPTypes

/// Every refusal a route makes before the pipeline answers, typed: each case maps itself to its
/// status, its short text and its headers (as `PipelineError` does for the pipeline's), so a
/// route says what went wrong, not which status to send.
enum RequestError: Error, Equatable, HTTPResponseError {
    /// No image at that URL (a malformed path, an unknown source): 404 "no such image".
    case noSuchImage
    /// Nothing at that URL, with a reason (an unknown format, a page past the last, the gallery
    /// turned off): 404.
    case notFound(String)
    /// A signature missing, malformed or not matching any key: 403.
    case badSignature
    /// A request refused for what it asks (a source outside the policy, purging without the
    /// admin token): 403.
    case refused(String)
    /// An option or value of the URL that cannot be served (its text names it): 400.
    case invalid(String)
    /// An expiring URL past its time: 410.
    case expired
    /// Too much is being made already: 429 with `Retry-After: 1`.
    case tooManyRequests
    /// A request the server cannot frame (a transfer coding other than chunked): 501.
    case notImplemented(String)

    var status: HTTPResponse.Status {
        switch self {
        case .noSuchImage, .notFound: .notFound
        case .badSignature, .refused: .forbidden
        case .invalid: .badRequest
        case .expired: .gone
        case .tooManyRequests: .tooManyRequests
        case .notImplemented: .notImplemented
        }
    }

    /// What the client is told.
    var message: String {
        switch self {
        case .noSuchImage: "no such image"
        case .badSignature: "missing or bad signature"
        case .expired: "this URL has expired"
        case .tooManyRequests: "too many requests; try again shortly"
        case .notFound(let text), .refused(let text), .invalid(let text), .notImplemented(let text): text
        }
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var answer = ImageServer.text(status, message)
        if self == .tooManyRequests { answer.headers[.retryAfter] = "1" }
        return answer
    }
}

extension RequestError {
    /// A plan's refusal: the URL's fault, a 400 with its text.
    init(_ error: PlanError) { self = .invalid(error.description) }

    /// `body`, a `PlanError` it throws answered as a 400.
    static func planning<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as PlanError { throw RequestError(error) }
    }
}

extension ImagePlan {
    /// The plan's steps under the server's limits (`maxAdHocSize`, `maxOutputPixels`); a refusal
    /// is a 400.
    func processors(for configuration: ServerConfiguration, marks: [MarkImage] = [], frame: PreparedWatermark? = nil) throws -> [any ImageProcessor] {
        try RequestError.planning {
            try processors(limit: configuration.maxAdHocSize, maxPixels: configuration.maxOutputPixels, marks: marks, frameImage: frame)
        }
    }
}
