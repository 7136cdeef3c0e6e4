import EaselCodecs
import Foundation

/// Something that has images in an `ImageTableCache` (FastImageCache's `FICEntity`): a photo, a
/// user's avatar, a page of a document.
///
/// ```swift
/// struct Photo: ImageEntity {
///     let entityID: UUID
///     let sourceImageID: UUID
///     let file: URL
///     func sourceImageURL(forFormat name: String) -> URL? { file }
/// }
/// ```
public protocol ImageEntity: Sendable {
    /// Stable across runs: the key of this entity's entries.
    var entityID: UUID { get }
    /// Identifies the source image; when it changes, the entity's entries are stale and are
    /// replaced on the next `setImage` or retrieval through the source provider.
    var sourceImageID: UUID { get }
    /// Where the source image for a format comes from (a file URL is read by the cache itself
    /// when no source provider is set; other URLs are for the provider).
    func sourceImageURL(forFormat name: String) -> URL?
    /// A custom drawing step that replaces the format's processing for this entity, or nil (the
    /// default) to use the format's. The result must fit the format's size.
    func draw(_ source: Bitmap, for format: ImageFormat) throws -> Bitmap?
}

extension ImageEntity {
    public func draw(_ source: Bitmap, for format: ImageFormat) throws -> Bitmap? { nil }
}

/// A source image as the source provider hands it over.
public enum SourceImage: Sendable {
    /// Decoded pixels.
    case bitmap(Bitmap)
    /// Encoded bytes (JPEG, PNG, WebP, GIF); decoded once, shrunk on load to the largest size
    /// any format of the family needs.
    case encoded(Data)
}

/// Supplies source images to an `ImageTableCache` when an entry is missing (FastImageCache's
/// delegate). Only `sourceImage(for:formatName:)` is required.
public protocol ImageSourceProvider: Sendable {
    /// The source image for `entity`; called once per missing entity and family however many
    /// requests wait for it. Cancelled (task cancellation) when every waiting request is.
    func sourceImage(for entity: any ImageEntity, formatName: String) async throws -> SourceImage
    /// Whether to make every format of `family` from this source, or only the requested ones.
    /// Default: every format.
    func shouldProcessAllFormats(inFamily family: String, for entity: any ImageEntity) -> Bool
    /// Every request for this entity and format was cancelled before its image was ready.
    func didCancel(entity: any ImageEntity, formatName: String)
    /// Making this entity's entry for this format failed.
    func didFail(entity: any ImageEntity, formatName: String, error: ImageTableError)
}

extension ImageSourceProvider {
    public func shouldProcessAllFormats(inFamily family: String, for entity: any ImageEntity) -> Bool { true }
    public func didCancel(entity: any ImageEntity, formatName: String) {}
    public func didFail(entity: any ImageEntity, formatName: String, error: ImageTableError) {}
}
