import ArgumentParser
import EaselSupport

@main
struct EaselCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "easel",
        abstract: "Image loading, processing and caching for Swift on Linux.",
        discussion: """
        Shell completions: easel --generate-completion-script bash (or zsh, fish); for bash, \
        easel --generate-completion-script bash > /etc/bash_completion.d/easel.
        """,
        version: "easel " + BuildInfo.description,
        subcommands: [CacheCommand.self, CompareCommand.self, FetchCommand.self, InfoCommand.self, LogRelayCommand.self, RenderWorkerCommand.self, ServeCommand.self, SettingsCommand.self, SignCommand.self,
                      ThumbnailCommand.self, WarmCommand.self]
    )
}
