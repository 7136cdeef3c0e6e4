import ArgumentParser
import EaselCodecs
import EaselServer
import Foundation

/// `easel render-worker`: a render worker process (`RenderWorker`), started and fed by another
/// easel process's `RenderWorkers` pool over its standard input and output. Not for people.
struct RenderWorkerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render-worker",
        abstract: "Render SVG and PDF documents for another easel process (internal).",
        shouldDisplay: false
    )

    @Option(name: .customLong("memory-limit"), help: "The address space this worker may use, in bytes (0: no limit).")
    var memoryLimit = 0

    func run() throws {
        throw ExitCode(RenderWorker.run(memoryLimit: memoryLimit))
    }
}

/// `easel log-relay`: what `easel serve --log-format json` sends its raw standard error through
/// (`StandardErrorRelay`): each line on, as one JSON object. Not for people.
struct LogRelayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log-relay",
        abstract: "Write each line of standard input as one JSON object (internal).",
        shouldDisplay: false
    )

    func run() throws { StandardErrorRelay.relay() }
}

/// The render isolation of the CLI's commands that read images (`thumbnail`, `info`, `fetch`,
/// `warm`, `compare`): workers of this executable with the server's default limits, unless
/// `EASEL_RENDER_WORKERS=0` says to render in process. `serve` takes its own settings
/// (`RenderWorkerSettings`).
enum CommandRenderIsolation {
    static func start(_ settings: RenderWorkerSettings = RenderWorkerSettings(), requestTimeout: Double = 300) {
        var settings = settings
        if let text = ProcessInfo.processInfo.environment["EASEL_RENDER_WORKERS"], ["0", "false", "no", "off"].contains(text.lowercased()) {
            settings.enabled = false
        }
        RenderIsolation.use(settings.isolation(executable: "/proc/self/exe", requestTimeout: requestTimeout))
    }
}

/// `easel settings`: every setting of `easel serve` — JSON key, variables, flag, default and
/// meaning — as the Markdown of `docs/configuration.md` (`ServerConfiguration.reference`).
struct SettingsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "settings",
        abstract: "Print every setting of easel serve: JSON key, environment variables, flag, default and meaning (Markdown)."
    )

    func run() { print(ServerConfiguration.referenceMarkdown(), terminator: "") }
}
