import EaselCodecs

/// A watermark's image and its identity (a prepared source's, or a text mark's).
public struct MarkImage: Sendable {
    /// The mark's pixels.
    public var image: Bitmap
    /// Its identity, part of the answer's (a prepared source's, or a text mark's).
    public var identifier: String
    /// A mark's image and identity.
    public init(image: Bitmap, identifier: String) {
        self.image = image
        self.identifier = identifier
    }
}

extension Watermark.Position {
    /// The position of a gravity (the nine directions; nil for the others).
    public init?(_ gravity: Gravity) {
        switch gravity {
        case .center: self = .center
        case .north: self = .north
        case .south: self = .south
        case .east: self = .east
        case .west: self = .west
        case .northEast: self = .northEast
        case .northWest: self = .northWest
        case .southEast: self = .southEast
        case .southWest: self = .southWest
        default: return nil
        }
    }
}
