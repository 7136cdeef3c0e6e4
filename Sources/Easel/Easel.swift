@_exported import EaselStorage
