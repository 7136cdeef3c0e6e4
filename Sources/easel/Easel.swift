import ArgumentParser

@main
struct EaselCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "easel",
        abstract: "Image loading, processing and caching for Swift on Linux.",
        subcommands: [CacheCommand.self, CompareCommand.self, FetchCommand.self, InfoCommand.self, LogRelayCommand.self, RenderWorkerCommand.self, ServeCommand.self, SignCommand.self,
                      ThumbnailCommand.self, WarmCommand.self]
    )
}
