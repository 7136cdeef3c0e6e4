@_exported import EaselCodecs
@_exported import EaselStorage
@_exported import EaselTables
@_exported import EaselRemote
@_exported import EaselPipeline
