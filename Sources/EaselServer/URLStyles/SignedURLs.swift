import Foundation

/// Signed URLs in the three styles `easel serve` answers (what `easel sign` prints).
public enum SignedURLs {
    /// Why a URL could not be signed; `description` is the message shown.
    public enum SigningError: Error, CustomStringConvertible {
        /// A key or salt (named) is not hex, or a key is empty.
        case notHex(String)
        /// A required key (named) is empty.
        case missingKey(String)
        /// A native path to sign has a query: the server checks only the path and `exp`.
        case query

        public var description: String {
            switch self {
            case .notHex(let what): "\(what) is not hex"
            case .missingKey(let what): "no \(what) given"
            case .query: "a native path is signed without a query (the server checks the path and exp only)"
            }
        }
    }

    /// A native path (`/images/{format or options}/{source}`) with `?exp=UNIX&s=…` (or just
    /// `?s=…`): the signature covers the path and the expiry.
    public static func native(path: String, keyHex: String, saltHex: String, expires: Int64?) throws -> String {
        guard let key = Data(hex: keyHex), !keyHex.isEmpty else { throw SigningError.notHex("the key") }
        guard let salt = Data(hex: saltHex) else { throw SigningError.notHex("the salt") }
        let plain = path.hasPrefix("/") ? path : "/" + path
        // The server verifies the path (and exp): a query of the caller's would break the signature.
        guard !plain.contains("?") else { throw SigningError.query }
        let signed = plain + (expires.map { "?exp=\($0)" } ?? "")
        let signature = URLSigner(keys: [key], salt: salt).signature(path: signed)
        return signed + (expires == nil ? "?" : "&") + "s=" + signature
    }

    /// `/imgproxy/{signature}/{options…/source}` for `path` (options and source, as imgproxy
    /// URLs write them after the signature).
    public static func imgproxy(path: String, keyHex: String, saltHex: String) throws -> String {
        guard let key = Data(hex: keyHex), !keyHex.isEmpty else { throw SigningError.notHex("the imgproxy key") }
        guard let salt = Data(hex: saltHex) else { throw SigningError.notHex("the imgproxy salt") }
        let plain = path.hasPrefix("/") ? path : "/" + path
        return "/imgproxy/" + ImgproxyURL.signature(path: plain, key: key, salt: salt) + plain
    }

    /// `/thumbor/{signature}/{path}` with thumbor's HMAC-SHA1 signature.
    public static func thumbor(path: String, key: String) throws -> String {
        guard !key.isEmpty else { throw SigningError.missingKey("thumbor security key") }
        let plain = path.drop { $0 == "/" }
        return "/thumbor/" + ThumborURL.signature(path: plain, key: key) + "/" + plain
    }
}
