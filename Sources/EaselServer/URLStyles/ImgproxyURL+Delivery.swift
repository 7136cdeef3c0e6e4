import EaselCodecs
import EaselPipeline
import Foundation

/// imgproxy Pro's options for how an answer goes out rather than what it shows: a URL's own
/// fallback image (`fallback_image_url`) and cache tags (`cache_tags`).
extension ImgproxyURL {
    /// `fallback_image_url`/`fiu` or `cache_tags`/`ct`, applied to `options`.
    static func applyDelivery(_ a: OptionArguments, to options: inout ImagePlan) throws {
        switch a.name {
        case "fallback_image_url", "fiu":
            // The fallback image for this URL (base64url), read like a source.
            try a.atMost(1)
            options.fallback = try source(try a.base64URL(0, "fallback_image_url is a base64url-encoded URL"))
        case "cache_tags", "ct":
            // Tags the answer's cache tag header names besides its sources'.
            var tags: [String] = []
            for tag in a.args where !tag.isEmpty {
                guard tag.utf8.count <= ImagePlan.maxCacheTagBytes,
                      tag.utf8.allSatisfy({ (0x21...0x7E).contains($0) && $0 != UInt8(ascii: ",") && $0 != UInt8(ascii: "\"") }) else {
                    throw RequestError.invalid("cache_tags: a tag is 1–\(ImagePlan.maxCacheTagBytes) visible ASCII characters, no comma or quote")
                }
                if !tags.contains(String(tag)) { tags.append(String(tag)) }
            }
            guard tags.count <= ImagePlan.maxCacheTags else {
                throw RequestError.invalid("cache_tags: at most \(ImagePlan.maxCacheTags) tags")
            }
            options.cacheTags = tags
        default:
            throw RequestError.invalid("\(a.name) is no delivery option")
        }
    }
}
