import EaselSupport
import EaselCodecs
import EaselPipeline
import Foundation

/// imgproxy's options for how an answer goes out rather than what it shows: until when the URL
/// is served (`expires`), the answer's file name (`filename`, `return_attachment`), a cache
/// buster, and Pro's fallback image (`fallback_image_url`) and cache tags (`cache_tags`).
extension ImgproxyURL {
    /// `expires`/`exp`, `filename`/`fn`, `return_attachment`/`att`, `cachebuster`/`cb`,
    /// `fallback_image_url`/`fiu` or `cache_tags`/`ct`, applied to `options`.
    static func applyDelivery(_ a: OptionArguments, to options: inout ImagePlan) throws {
        switch a.name {
        case "expires", "exp":
            try a.atMost(1)
            guard let text = a.arg(0), let time = Int64(text) else { throw RequestError.invalid("expires is a UNIX time in seconds") }
            options.expires = time
        case "filename", "fn":
            try a.atMost(2)
            guard let text = a.arg(0) else { throw RequestError.invalid("filename needs a name") }
            if try a.bool(1) == true {
                guard let data = URLSigner.decodeBase64URL(String(text)), let decoded = String(data: data, encoding: .utf8) else {
                    throw RequestError.invalid("filename: the encoded name is not base64url")
                }
                options.filename = decoded
            } else {
                options.filename = String(text).removingPercentEncoding ?? String(text)
            }
        case "return_attachment", "att":
            try a.atMost(1)
            options.attachment = try a.bool(0) ?? false
        case "cachebuster", "cb":
            try a.atMost(1)  // changes the URL (for CDNs), not the image
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
