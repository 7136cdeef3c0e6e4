import EaselCodecs
import EaselPipeline
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The fallback image and Save-Data (`DeliverySettings`).
extension ImageServer {
    /// A fallback image: the configured one (`DeliverySettings.fallbackImage`) or a URL's own
    /// (imgproxy's `fallback_image_url`), resolved like a source, with its source key (nil:
    /// the configured image's, made from its file path or checked when it is read).
    struct Fallback: Sendable {
        var url: URL
        var cacheKey: String?
    }

    /// The configured fallback image, if any.
    var configuredFallback: Fallback? { fallbackURL.map { Fallback(url: $0, cacheKey: nil) } }

    static let fallbackField = HTTPField.Name("X-Easel-Fallback")!
    static let saveDataField = HTTPField.Name("Save-Data")!
    static let acceptCHField = HTTPField.Name("Accept-CH")!

    /// Whether the request asks to save data and the server honours it.
    func saves(_ request: Request) -> Bool {
        configuration.delivery.saveData && request.headers[Self.saveDataField]?.trimmingCharacters(in: .whitespaces).lowercased() == "on"
    }

    /// The fallback image as the pipeline takes it (`ImageRequest.fallback`): a file under its
    /// escaped path, a URL with its own key as it is, another URL resolved like a source; nil
    /// for none, or one that does not resolve (the source's error then stands).
    func fallbackSource(_ image: Fallback?) -> FallbackSource? {
        guard let image else { return nil }
        if image.url.isFileURL { return FallbackSource(url: image.url, cacheKey: image.cacheKey ?? "file://" + Self.escapingNonASCII(image.url.path)) }
        if image.cacheKey != nil { return FallbackSource(url: image.url, cacheKey: image.cacheKey) }
        do {
            return FallbackSource(url: try resolve(.remote(image.url)))
        } catch {
            logger.debug("the fallback image is refused: a failing source's error stands", metadata: ["fallback error": "\(error)"])
            return nil
        }
    }
}
