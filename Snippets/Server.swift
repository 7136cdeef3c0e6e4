// The image server in a Hummingbird 2 application of your own: JSON logs carrying request IDs,
// the configuration from a file, the environment and code, the server's routes beside yours,
// a graceful stop on SIGTERM or SIGINT, then the server's caches written. Run it from the
// repository root: without a configuration file or EASEL_ORIGIN it serves `Samples/`.

import EaselServer
import Foundation
import Hummingbird
import Logging

// snippet.logging
// One JSON object a line on standard error; every line written while a request is handled
// carries its X-Request-ID as `request_id`, whichever logger writes it.
LoggingSystem.bootstrap({ label, provider in
    JSONLogHandler(label: label, metadataProvider: provider)
}, metadataProvider: RequestID.metadataProvider)
// snippet.end

// snippet.configure
let file = "easel.json"
var configuration = ServerConfiguration()                       // every default
if FileManager.default.fileExists(atPath: file) {
    configuration = try ServerConfiguration.load(file: file)    // every key optional
}
try configuration.apply(environment: ProcessInfo.processInfo.environment)   // EASEL_* win over the file
configuration.maxAge = 3600                                     // code (flags, in easel serve) wins over both
// snippet.end

// snippet.make
configuration.gallery = false                   // GET / answers 404 instead of the gallery
configuration.maxAge = 3600                     // Cache-Control: public, max-age=3600
let images = try ImageServer(configuration: configuration)   // validates the configuration first
// snippet.end

// snippet.routes
// /images/…, /imgproxy/…, /thumbor/…, /info/…, /health and /metrics, plus your own routes.
let router = images.router()
router.get("/api/version") { _, _ in "1.0\n" }
router.get("/api/hello/:name") { _, context in "hello, \(context.parameters.get("name") ?? "you")\n" }
// snippet.end

// snippet.run
let app = Application(
    router: router,
    server: images.httpServer(),                // idle timeout, connection cap, ready answers
    configuration: .init(address: .hostname("127.0.0.1", port: 8080)))
do {
    try await app.runService()                  // until SIGTERM or SIGINT; requests in flight finish
} catch {
    await images.shutdown()
    throw error
}
await images.shutdown()                         // writes the image tables, closes the pipeline
// snippet.end

// snippet.runAlone
// Without routes of your own, the server runs itself, as `easel serve` does.
func serveAlone(_ configuration: ServerConfiguration) async throws {
    let server = try ImageServer(configuration: configuration)
    try await server.run()      // prints the address; on SIGTERM or SIGINT: finish, write the caches, return
}
// snippet.end
