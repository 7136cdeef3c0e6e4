import EaselSupport
import ArgumentParser
import EaselServer
import Foundation

struct SignCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign",
        abstract: "Print a signed URL for easel serve: native, imgproxy-style or thumbor-style.",
        discussion: """
        Keys come from the options, else the environment the server reads: EASEL_SIGNING_KEYS (the first) and \
        EASEL_SIGNING_SALT for native URLs, IMGPROXY_KEY and IMGPROXY_SALT (the first pair) for imgproxy URLs, \
        THUMBOR_SECURITY_KEY for thumbor URLs.
        Examples:
          easel sign native /images/w=300,h=200,fit=fill/photo.jpg --expires-in 3600
          easel sign imgproxy rs:fill:300:200/g:sm/plain/local:///photo.jpg@webp
          easel sign thumbor 300x200/smart/photo.jpg
        """)

    enum Style: String, ExpressibleByArgument, CaseIterable {
        case native, imgproxy, thumbor
    }

    @Argument(help: "native, imgproxy or thumbor.") var style: Style
    @Argument(help: "What to sign: a native path (/images/…), or the part of an imgproxy or thumbor URL after the signature.")
    var path: String
    @Option(help: "Signing key (hex for native and imgproxy; text for thumbor).") var key: String?
    @Option(help: "Salt (hex; native and imgproxy).") var salt: String?
    @Option(name: .customLong("expires-in"), help: "Native URLs: valid for this many seconds (exp= is signed).") var expiresIn: Int64?
    @Option(name: .customLong("expires-at"), help: "Native URLs: valid until this UNIX time.") var expiresAt: Int64?
    @Option(help: "Prefix to print before the path, e.g. https://img.example.com.") var base: String = ""

    func run() throws {
        let environment = ProcessInfo.processInfo.environment
        func first(_ name: String) -> String? {
            environment[name].flatMap { $0.split(separator: ",").first.map { String($0).trimmingCharacters(in: .whitespaces) } }
        }
        let signed: String
        do {
            switch style {
            case .native:
                guard expiresIn == nil || expiresAt == nil else { throw ValidationError("give --expires-in or --expires-at, not both") }
                var expires = expiresAt
                if let expiresIn {
                    let (sum, overflow) = Int64(checked: Date().timeIntervalSince1970).addingReportingOverflow(expiresIn)
                    guard !overflow, expiresIn > 0 else { throw ValidationError("--expires-in must be a positive number of seconds") }
                    expires = sum
                }
                guard let key = key ?? first("EASEL_SIGNING_KEYS") else { throw ValidationError("no key: --key or EASEL_SIGNING_KEYS") }
                signed = try SignedURLs.native(path: path, keyHex: key, saltHex: salt ?? environment["EASEL_SIGNING_SALT"] ?? "", expires: expires)
            case .imgproxy:
                guard expiresIn == nil, expiresAt == nil else { throw ValidationError("expiry is for native URLs (imgproxy has its own exp option in its paid edition)") }
                guard let key = key ?? first("IMGPROXY_KEY") ?? first("IMGPROXY_KEYS"),
                      let salt = salt ?? first("IMGPROXY_SALT") ?? first("IMGPROXY_SALTS") else {
                    throw ValidationError("no key and salt: --key/--salt or IMGPROXY_KEY/IMGPROXY_SALT")
                }
                signed = try SignedURLs.imgproxy(path: path, keyHex: key, saltHex: salt)
            case .thumbor:
                guard expiresIn == nil, expiresAt == nil else { throw ValidationError("expiry is for native URLs") }
                guard let key = key ?? environment["THUMBOR_SECURITY_KEY"] else { throw ValidationError("no key: --key or THUMBOR_SECURITY_KEY") }
                signed = try SignedURLs.thumbor(path: path, key: key)
            }
        } catch let error as SignedURLs.SigningError {
            throw ValidationError(error.description)
        }
        print(base + signed)
    }
}
