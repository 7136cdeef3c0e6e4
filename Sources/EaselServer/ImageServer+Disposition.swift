import EaselPipeline
import Foundation

/// `Content-Disposition` of imgproxy-style answers.
extension ImageServer {
    /// RFC 5987's attr-char: ASCII letters and digits and `!#$&+-.^_`|~`.
    static let attrChar = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!#$&+-.^_`|~")

    /// The source's file name without its extension (imgproxy names an answer after it).
    static func sourceName(_ source: Source) -> String {
        let last: String
        switch source {
        case .path(let segments): last = segments.last ?? ""
        case .remote(let url): last = url.lastPathComponent
        }
        let stem = last.contains(".") ? String(last[..<last.lastIndex(of: ".")!]) : last
        return stem.isEmpty ? "image" : stem
    }

    /// `inline` or `attachment`, with `name` and the format's extension: quoted ASCII (quotes,
    /// backslashes and control characters dropped), and `filename*` in UTF-8 when the name has
    /// more than ASCII (RFC 6266).
    static func contentDisposition(_ name: String, format: ImageEncoding.Format, attachment: Bool) -> String {
        contentDisposition(name, fileExtension: format.fileExtension, attachment: attachment)
    }

    /// The same with an extension of its own (a source answered as it is: `tiff`, `pdf`…).
    static func contentDisposition(_ name: String, fileExtension: String, attachment: Bool) -> String {
        // No control characters and no bidirectional controls (U+202E would show `gpj.exe` as
        // `exe.jpg`), in either form of the name.
        let shown = String(String.UnicodeScalarView(name.unicodeScalars.filter { !Self.isHiddenControl($0) }))
        let fileName = (shown.isEmpty ? "image" : shown) + "." + fileExtension
        let ascii = String(fileName.unicodeScalars.filter { $0.isASCII && $0.value >= 0x20 && $0 != "\"" && $0 != "\\" && $0.value != 0x7F })
        var value = (attachment ? "attachment" : "inline") + "; filename=\"" + ascii + "\""
        if ascii != fileName, let encoded = fileName.addingPercentEncoding(withAllowedCharacters: Self.attrChar) {
            value += "; filename*=UTF-8''" + encoded
        }
        return value
    }

    /// Control characters, bidirectional controls and invisible formatting marks.
    static func isHiddenControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0...0x1F, 0x7F...0x9F, 0x200B...0x200F, 0x202A...0x202E, 0x2060...0x2069, 0x061C, 0xFEFF: true
        default: false
        }
    }
}
