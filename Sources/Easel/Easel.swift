@_exported import EaselCodecs
@_exported import EaselStorage
@_exported import EaselTables
