// Image tables: a family of formats, entities, a source provider, zero-copy reads from an
// `ImageTableCache`, and one `ImageTable` used directly. Run it from the repository root.

import EaselCodecs
import EaselTables
import Foundation

// snippet.entity
// The thing that has images: stable IDs, and where its source image comes from.
struct Photo: ImageEntity {
    let entityID: UUID
    let sourceImageID: UUID   // changes when the photo is replaced: its entries become stale
    let file: URL
    func sourceImageURL(forFormat name: String) -> URL? { file }
}
// snippet.end

// snippet.provider
// Called once per missing entity and family, however many requests wait for it.
struct PhotoLibrary: ImageSourceProvider {
    struct Missing: Error {}

    func sourceImage(for entity: any ImageEntity, formatName: String) async throws -> SourceImage {
        guard let url = entity.sourceImageURL(forFormat: formatName) else { throw Missing() }
        return try .encoded(Data(contentsOf: url))      // decoded once for the whole family
    }

    func didFail(entity: any ImageEntity, formatName: String, error: ImageTableError) {
        print("\(formatName) of \(entity.entityID) failed: \(error)")
    }
}
// snippet.end

// snippet.formats
var thumb = ImageFormat(name: "thumb", family: "photos", width: 256, height: 256, fit: .fill, maximumCount: 5_000)
thumb.processors = [try RoundedCorners(radius: 16)]      // run in order after the resize
let small = ImageFormat(name: "small", family: "photos", width: 512, height: 512, maximumCount: 1_000)
let preview = ImageFormat(name: "preview", family: "photos", width: 1600, height: 1600, maximumCount: 100,
                          storage: .diskCache)           // raw pixels in a disk cache, nothing mapped
// snippet.end

// snippet.hide
let directory = FileManager.default.temporaryDirectory.appendingPathComponent("easel-image-tables")
let samples = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("Samples")
// snippet.show

// snippet.cache
let cache = try ImageTableCache(directory: directory, formats: [thumb, small, preview], sourceProvider: PhotoLibrary())
let photo = Photo(entityID: UUID(), sourceImageID: UUID(), file: samples.appendingPathComponent("chelsea-cat.jpg"))

if let present = try cache.cachedImage(for: photo, formatName: "thumb") {
    print("present: \(present.width)×\(present.height), no decode, no copy")
}
// Missing: asks the provider, makes thumb, small and preview from one decode, stores them.
let image = try await cache.image(for: photo, formatName: "thumb")
print("made: \(image.width)×\(image.height)")
// snippet.end

// snippet.retrieve
// FastImageCache's form: true and an immediate completion when the entry is present.
let wasPresent = cache.retrieveImage(for: photo, formatName: "small") { result in
    switch result {
    case .success(let bitmap): print("small: \(bitmap.width)×\(bitmap.height)")
    case .failure(let error): print("small: \(error)")
    }
}
print(wasPresent ? "small was in its table" : "small is on its way")
try cache.deleteImages(for: photo)
cache.close()
// snippet.end

// snippet.table
// One format's table, without the cache: the entry is made exactly as the cache makes it.
let table = try ImageTable(format: thumb, directory: directory.appendingPathComponent("direct"))
let data = try Data(contentsOf: photo.file)
let info = try ImageDecoder.info(of: data)
let needed = thumb.minimumSourceSize(sourceWidth: info.uprightWidth, sourceHeight: info.uprightHeight)
let entry = try thumb.process(ImageDecoder.decode(data, info: info, covering: needed))  // shrink-on-load
try table.setImage(entry, for: photo.entityID, sourceID: photo.sourceImageID)
if let pixels = table.image(for: photo.entityID) {
    // `pixels` borrows the mapped entry: it stays pinned, and unchanged, while the bitmap lives.
    print("\(pixels.width)×\(pixels.height), \(pixels.rowBytes) bytes a row")
}
table.close()
// snippet.end
