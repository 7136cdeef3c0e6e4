import EaselCodecs
import EaselStorage
import EaselSupport
import EaselTables
import Foundation

/// The decode stage: a bitmap variant made from its source — the processed variant on disk
/// (bitmap requests), else the original (one `FetchTask`), decoded once at the scale the
/// requested format needs (shrink-on-load), processed and stored; the family's other formats
/// follow after the answer. For an answer that keeps animations (`frames`), an animated source
/// is read frame by frame instead, each frame processed the same way and encoded as it is read:
/// the animation is the still path with frames.
struct DecodeTask: PipelineTask {
    let pipeline: ImagePipeline
    let request: ImageRequest
    let url: URL
    let bitmapKey: BitmapKey
    let format: ImageFormat?
    let mark: PurgeMarks.Mark
    /// The animation's encoding when the answer keeps animations (an animated WebP); nil for a
    /// still.
    let frames: ImageEncoding?

    var key: WorkKey { .decode(bitmapKey, request: request, mark: mark, frames: frames) }

    static func coalescer(in graph: TaskGraph) -> WorkCoalescer<WorkKey, ImagePipeline.Processed> { graph.decodes }

    func run(_ handle: PriorityHandle) async throws(PipelineError) -> ImagePipeline.Processed {
        let name = format?.name ?? request.processingIdentifier
        let sourceKey = bitmapKey.source
        let (entityID, sourceID) = ImagePipeline.entityIDs(request, sourceKey: sourceKey)
        // The processed variant in the disk cache (bitmap requests only: an encoded answer never
        // starts from another encoding).
        if let variant = await diskVariant(handle, name: name, entityID: entityID) { return variant }
        // The original, from the disk cache or the fetcher (one fetch per original).
        let fetchWaiter = pipeline.nextID()
        handle.observe { [fetches = pipeline.tasks.fetches] priority in fetches.setPriority(waiter: fetchWaiter, priority) }
        let original = try await pipeline.tasks.run(FetchTask(pipeline: pipeline, url: url, sourceKey: sourceKey, policy: request.cachePolicy,
                                                              mark: mark), waiter: fetchWaiter, priority: handle.priority)
        handle.observe(nil)
        // Decode at the scale this request needs, make its own image (or animation) and answer;
        // the family's other formats follow from the same decode, after the answer.
        // (Only a request with no page or limits of its own has a family: the image tables'
        // formats are of the first page, as any request sees it.)
        let family: [ImageFormat] = !request.variantSuffix.isEmpty ? [] : format.map { format in
            pipeline.configuration.familyInBackground
                ? pipeline.configuration.formats.filter { $0.family == format.family && $0.name != format.name } : []
        } ?? []
        let cost = pipeline.tasks.decodeSlots.budget == nil ? 0
            : await pipeline.estimatedPeakBytes(original.data, request: request, format: format, animated: frames != nil)
        return try await pipeline.tasks.decodeSlots.run(priority: handle, cost: cost) { () async throws(PipelineError) -> ImagePipeline.Processed in
            try await BlockingIOPool.decoding.performCancellable { () throws(PipelineError) -> ImagePipeline.Processed in
                // Also when processing fails or is cancelled after the original was stored: a
                // purge that began meanwhile takes it back.
                defer { pipeline.undoIfPurged(mark, sourceKey: sourceKey, entityID: entityID) }
                // Work nobody waits for any more (queued behind others) is not started; the
                // original it fetched is kept all the same (the next request needs no fetch).
                if WorkCancellation.isCancelled {
                    pipeline.storePendingOriginal(original, sourceKey: sourceKey)
                    throw .cancelled
                }
                let work = ImagePipeline.DecodeWork(request: request, name: name, sourceKey: sourceKey, ids: (entityID, sourceID), mark: mark)
                return try pipeline.decodeAndProcess(original, work, format: format, family: family, frames: frames)
            }
        }
    }

    /// The processed variant from the disk cache, decoded in a decode slot (bitmap requests).
    private func diskVariant(_ handle: PriorityHandle, name: String, entityID: UUID) async -> ImagePipeline.Processed? {
        guard request.cachePolicy != .reload, request.usesDiskVariants, let disk = pipeline.disk,
              !request.variantSuffix.isEmpty || format.map({ pipeline.tables[$0.name] == nil }) ?? true,
              let record = await Traces.cacheRead(store: disk.storeName, entry: "variant", { try? await disk.data(forKey: bitmapKey.disk) }),
              let (data, freshUntil, _) = VariantRecord.decode(record) else { return nil }
        let limits = pipeline.decodingLimits(for: request)
        guard let image = try? await pipeline.tasks.decodeSlots.run(priority: handle, { () async throws(PipelineError) -> Bitmap in
            try await BlockingIOPool.decoding.performCancellable { () throws(PipelineError) -> Bitmap in
                do { return try ImageDecoder.decode(data, limits: limits) } catch { throw .codec(error) }
            }
        }) else { return nil }
        let sourceKey = bitmapKey.source
        pipeline.keep(image, key: bitmapKey.memoryFromVariant, sourceKey: sourceKey, until: freshUntil)
        if !pipeline.purges.isCurrent(mark) {
            _ = try? await BlockingIOPool.shared.perform { [pipeline, mark] () throws(PipelineError) in
                pipeline.undoIfPurged(mark, sourceKey: sourceKey, entityID: entityID)
            }
        }
        return ImagePipeline.Processed(images: [name: image], tier: .diskVariant, info: nil, freshUntil: freshUntil)
    }
}

extension ImagePipeline {
    /// What a decode made: its images (the requested one; more for the image table cache's
    /// families), or an animation's encoded bytes, with what is known of the original.
    struct Processed: Sendable {
        var images: [String: Bitmap]
        var tier: ImageTier
        var info: ImageInfo?
        var freshUntil: Date?
        var storable = true
        /// An animated source's frames, processed and encoded (`DecodeTask.frames`).
        var animation: Data?
        /// The family's formats still to make, for whoever answers to start after its answer.
        var family: FamilyJob?
    }

    /// Work to start once, after an answer (the first of the requesters sharing it to get there).
    struct FamilyJob: Sendable {
        private let once = OnceFlag()
        private let work: @Sendable () -> Void
        init(_ work: @escaping @Sendable () -> Void) { self.work = work }
        func start() { if once.claim() { work() } }
    }

    /// The format a request names (nil for ad-hoc processing or the original); throws for an
    /// unknown name.
    func namedFormat(_ request: ImageRequest) throws(PipelineError) -> ImageFormat? {
        guard case .format(let name) = request.processing else { return nil }
        guard let format = formatsByName[name] else { throw .unknownFormat(name) }
        return format
    }

    /// The bitmap variant from a tier that holds it (decoded memory, a table), without waiting
    /// for any work.
    func cachedBitmap(_ request: ImageRequest, key: BitmapKey, format: ImageFormat?) async -> Processed? {
        guard request.cachePolicy != .reload else { return nil }
        let name = format?.name ?? request.processingIdentifier
        if let image = memory.value(forKey: key.memory) {
            return Processed(images: [name: image], tier: .memory)
        }
        // Bitmaps decoded from a disk variant (another encoding, possibly lossy) have their own
        // key: an encoded answer never starts from one.
        if request.usesDiskVariants, let image = memory.value(forKey: key.memoryFromVariant) {
            return Processed(images: [name: image], tier: .memory)
        }
        if request.variantSuffix.isEmpty, let format, let table = tables[format.name] {
            let (entityID, sourceID) = Self.entityIDs(request, sourceKey: key.source)
            // The first read of an entry after opening verifies its checksum (reads 256 KiB for a
            // thumbnail): that one goes to the I/O pool.
            let image = table.needsVerification(entityID)
                ? try? await BlockingIOPool.shared.perform { () throws(PipelineError) in table.image(for: entityID, sourceID: sourceID) }
                : table.image(for: entityID, sourceID: sourceID)
            if let image { return Processed(images: [name: image], tier: .table) }
        }
        return nil
    }

    /// The bitmap variant (or, with `frames`, an animated source's animation) made by one shared
    /// `DecodeTask` (joined by every request for the same key).
    func decoded(_ request: ImageRequest, key: BitmapKey, format: ImageFormat?, frames: ImageEncoding?,
                 waiter: UInt64, priority: ImageRequest.Priority) async throws(PipelineError) -> Processed {
        guard let url = request.url else { throw .noSource }
        let task = DecodeTask(pipeline: self, request: request, url: url, bitmapKey: key, format: format,
                              mark: purges.mark(key.source), frames: frames)
        return try await tasks.run(task, waiter: waiter, priority: priority)
    }

    /// Blocking: stores a fetched original once (the first of the requests sharing it to get here).
    func storePendingOriginal(_ original: Original, sourceKey: String) {
        if let flag = original.pendingStore, flag.claim(), let disk {
            try? disk.set(OriginalRecord.encode(original.data, original.metadata), forKey: StoreKey.original(sourceKey))
        }
    }

    /// `request`'s processing applied to one decoded image (or frame) of the source `info`
    /// describes (a reduced decode runs the steps before the resize scaled: `ReducedDecode`).
    func make(_ decoded: Bitmap, for request: ImageRequest, format: ImageFormat?, info: ImageInfo) throws(PipelineError) -> Bitmap {
        switch request.processing {
        case .original:
            return decoded
        case .processors(let processors):
            do { return try ReducedDecode.process(processors, decoded: decoded, info: info) } catch { throw .processing(failure: error) }
        case .format:
            guard let format else { throw .noSource }
            do { return try format.process(decoded) } catch { throw .processing(failure: error) }
        }
    }

    /// Who a decode is for and where what it makes is kept.
    struct DecodeWork: Sendable {
        let request: ImageRequest
        /// The name its image is made under (the format's, or the request's processing).
        let name: String
        let sourceKey: String
        let ids: (entity: UUID, source: UUID)
        /// Taken before the fetch: a purge since then keeps what this decode makes out of the tiers.
        let mark: PurgeMarks.Mark
    }

    /// Blocking: runs on the decode pool in a decode slot. Reads the header; an animation the
    /// answer keeps (`frames`) is made frame by frame; otherwise one decode at the scale the
    /// request's own image needs (shrink-on-load), processed and stored, with the family's other
    /// formats left to a `familyJob` that the answerer starts after its answer.
    func decodeAndProcess(_ original: Original, _ work: DecodeWork, format: ImageFormat?, family: [ImageFormat],
                          frames: ImageEncoding?) throws(PipelineError) -> Processed {
        let (request, name, sourceKey, ids) = (work.request, work.name, work.sourceKey, work.ids)
        let decodeStart = ContinuousClock.now
        let limits = decodingLimits(for: request)
        let stores = request.cachePolicy != .noStore
        let info: ImageInfo
        do { info = try ImageDecoder.info(of: original.data, limits: limits, page: request.page,
                                                    embeddedThumbnail: request.embeddedThumbnail, video: request.video,
                                                    autoRotate: request.autoRotate) } catch let error as CodecError {
            try Self.checkWhole(original.data, fileType: (try? ImageFileType.sniff(original.data)) ?? .png)
            throw .codec(error)
        } catch {
            throw .decoding(.invalidParameters("\(error)"))
        }
        sourceTypes.note(sourceKey, type: info.fileType)
        let animated = info.isAnimated && (info.fileType == .gif || info.fileType == .webp)
        // An answer in the source's format: its animation in the format the source resolves to.
        let frames = frames.flatMap { $0.keepsSourceFormat ? $0.resolved(forSource: info.fileType).animationEncoding : $0 }
        if animated, info.page == 0, let frames, let animation = try animation(original, info: info, limits: limits, encoding: frames, request: request,
                                                              format: format, sourceKey: sourceKey) {
            try Self.checkWhole(original.data, fileType: info.fileType)
            noteAnimation(true, sourceKey: sourceKey, keepsMark: stores && original.cacheable)
            return Processed(images: [:], tier: original.tier, info: info, freshUntil: original.freshUntil, storable: original.cacheable,
                             animation: animation)
        }
        // A still, or an animation over the animation limits (its first frame, as before; it is
        // then noted as a still, so that later answers start from this still's tiers rather
        // than read the frames again).
        let overLimits = animated && frames != nil
        let decode: FamilyDecode
        do {
            // A named format: the decode covers that format. Ad-hoc processing: the decode covers
            // what its first resize needs, through any turn, flip or crop before it.
            decode = try FamilyDecode(original.data, info: info, targets: format.map { [$0] } ?? [], limits: limits) { info in
                guard case .processors(let processors) = request.processing else { return nil }
                return ReducedDecode.covering(processors, info: info)
            }
        } catch {
            // (A file that changed under the decode says so, whatever the decoder made of it.)
            try Self.checkWhole(original.data, fileType: info.fileType)
            throw .codec(error)
        }
        let decoded = decode.decoded
        // (An animation refused by limits of this request's own is still one for every other
        // request: only the pipeline's limits make it a still.)
        if !(overLimits && request.sourceLimits != nil) {
            noteAnimation(animated && !overLimits, sourceKey: sourceKey, keepsMark: stores && original.cacheable)
        }
        metrics.decodes.increment()
        metrics.decodedPixels.increment(by: decoded.width * decoded.height)
        metrics.stage(.decode, since: decodeStart, attributes: ["easel.format": .string("\(info.fileType)".lowercased()), "easel.bytes": .int64(Int64(original.data.count)),
                                                               "easel.width": .int64(Int64(decoded.width)), "easel.height": .int64(Int64(decoded.height))])
        storePendingOriginal(original, sourceKey: sourceKey)
        let processStart = ContinuousClock.now
        let image = try make(decoded, for: request, format: format, info: info)
        metrics.stage(.process, since: processStart)
        try Self.checkWhole(original.data, fileType: info.fileType)
        // What the decode read of a mapped file and kept (a decoder that does not hand back as
        // it goes) goes back now: the original lives on until the answer is made.
        InputFile.handBack(original.data)
        let made = Processed(images: [name: image], tier: original.tier, info: info, freshUntil: original.freshUntil,
                             storable: original.cacheable)
        guard stores, original.cacheable else { return made }
        storeMade([name: image], request: request, sourceKey: sourceKey, ids: ids, freshUntil: original.freshUntil)
        var result = made
        if !family.isEmpty {
            result.family = familyJob(family, from: decoded, info: info, work: work,
                                      original: (freshUntil: original.freshUntil, bytes: original.data.count))
        }
        return result
    }

    /// A local file is mapped (`FileFetcher`): one that shrank while it was decoded read zeros
    /// past its new end, and one written in place was read part old, part new: what was made of
    /// it is no image of the file's, to answer or keep.
    static func checkWhole(_ data: Data, fileType: ImageFileType) throws(PipelineError) {
        guard InputFile.wasCutShort(data) else { return }
        throw .decoding(.corrupt(format: fileType, reason: "the file changed while it was read"))
    }

    /// Blocking: what a decode found the source to be, in memory and on disk. The disk's mark
    /// outlives the memory tiers (a WebP answer made later from a table bitmap still knows); it
    /// is written by every decode that finds an animation (rare: a mark lost to a trim, or never
    /// written by a request that stored nothing, comes back), and removed when a source known
    /// as an animation decodes as a still (replaced without a purge).
    private func noteAnimation(_ animated: Bool, sourceKey: String, keepsMark: Bool) {
        let known = animatedSources.isAnimated(sourceKey)
        animatedSources.note(sourceKey, animated: animated)
        if animated {
            if keepsMark { try? disk?.set(Data([1]), forKey: StoreKey.animated(sourceKey)) }
        } else if known == true {
            try? disk?.removeValue(forKey: StoreKey.animated(sourceKey))
        }
    }

    /// Blocking: an animated WebP of an animated source, every frame processed as the request
    /// asks and encoded as it is read, with its delay. Nil when the animation is over the frame
    /// or animation-pixel limits: the caller makes its first frame instead.
    private func animation(_ original: Original, info: ImageInfo, limits: DecodingLimits, encoding: ImageEncoding,
                           request: ImageRequest, format: ImageFormat?, sourceKey: String) throws(PipelineError) -> Data? {
        let start = ContinuousClock.now
        let data: Data
        do {
            let encoder: any AnimationEncoder = encoding.format == .gif ? AnimatedGIFEncoder() : AnimatedWebPEncoder(quality: encoding.quality)
            try AnimationReader.frames(of: original.data, info: info, limits: limits) { frame in
                var processed = frame
                processed.image = try self.make(frame.image, for: request, format: format, info: info)
                try encoder.add(processed)
            }
            data = try encoder.finish()
        } catch CodecError.tooManyFrames, CodecError.tooManyAnimationPixels {
            return nil
        } catch let error as PipelineError {
            throw error
        } catch CodecError.cancelled, ImageTableError.cancelled {
            throw .cancelled
        } catch let error as CodecError {
            throw .codec(error)
        } catch {
            throw .processing("\(error)")
        }
        storePendingOriginal(original, sourceKey: sourceKey)
        metrics.decodes.increment()
        metrics.stage(.encode, since: start, attributes: ["easel.format": "\(encoding.format)", "easel.bytes": .int64(Int64(data.count)),
                                                          "easel.animated": true])
        metrics.encodes.increment()
        return data
    }

    /// Blocking: keeps images made for `request`'s source in their tiers: a table format in its
    /// table, others in the memory tier and (for bitmap requests) as a variant on disk.
    private func storeMade(_ images: [String: Bitmap], request: ImageRequest, sourceKey: String, ids: (entity: UUID, source: UUID),
                           freshUntil: Date?) {
        for (imageName, image) in images {
            if request.variantSuffix.isEmpty, let table = tables[imageName] {
                try? table.setImage(image, for: ids.entity, sourceID: ids.source)
                continue
            }
            // The image's own identity: a family format's, or the request's processing.
            guard let key = request.processing.isFormat ? familyBitmapKey(imageName, sourceKey: sourceKey, suffix: request.variantSuffix)
                    : bitmapKey(for: request, sourceKey: sourceKey) else { continue }
            keep(image, key: key.memory, sourceKey: sourceKey, madeWith: request.madeWith.map(\.sourceKey), until: freshUntil)
            if request.usesDiskVariants, let disk {
                let encodeStart = ContinuousClock.now
                let encoding = image.isKnownOpaque ? configuration.variantEncoding : .png(compressionLevel: 1)
                if let data = try? ImageEncoder.encode(image, as: encoding) {
                    metrics.stage(.encode, since: encodeStart)
                    metrics.encodes.increment()
                    try? disk.set(VariantRecord.encode(data, freshUntil: freshUntil, format: ImageEncoding.Format(encoding.fileType) ?? .png),
                                  forKey: key.disk, expiresAt: freshUntil)
                }
            }
        }
    }

    /// FastImageCache's "decode once, make every format of the family", without delaying
    /// anyone: after the answer, at the lowest priority, the family's other formats that
    /// `decoded` covers (those whose own decode would be this very one) are made from it and
    /// stored, unless a tier already has them. Each other decode scale the family needs gets
    /// one more decode, as a background request for its largest format (`followUps`): a
    /// foreground request for that format joins it rather than decoding again, and its own
    /// family job makes the rest of its scale.
    /// The job is started by whoever answers once the answer is made (after the encode, for an
    /// encoded answer): started earlier, it could take the decode slot the answer's encode
    /// needs. What such jobs hold while they wait — decoded bitmaps, and for follow-ups the
    /// original and the bitmap they will make — is bounded in bytes (`familyJobs`); a job past
    /// the bound is dropped (its formats are made on request).
    private func familyJob(_ family: [ImageFormat], from decoded: Bitmap, info: ImageInfo, work: DecodeWork,
                           original: (freshUntil: Date?, bytes: Int)) -> FamilyJob? {
        let (request, sourceKey, ids, mark) = (work.request, work.sourceKey, work.ids, work.mark)
        let (freshUntil, originalBytes) = original
        // Only formats whose own decode would be this very one (the same shrink-on-load
        // scale): a format's bytes, and so its ETag, never depend on which request came first.
        func ownDecode(_ format: ImageFormat) -> (width: Int, height: Int) {
            ImageDecoder.decodedSize(of: info, covering: format.minimumSourceSize(of: info))
        }
        let covered = family.filter { ownDecode($0) == (decoded.width, decoded.height) }
        // One format per other scale, the largest of it (a follow-up makes no follow-ups).
        var leads: [ImageFormat] = []
        if !request.isFamilyFollowUp {
            for format in family where !covered.contains(where: { $0.name == format.name }) {
                if let index = leads.firstIndex(where: { ownDecode($0) == ownDecode(format) }) {
                    if format.width * format.height > leads[index].width * leads[index].height { leads[index] = format }
                } else {
                    leads.append(format)
                }
            }
        }
        guard !covered.isEmpty || !leads.isEmpty else { return nil }
        let cost = decoded.rowBytes * decoded.height
        let reload = request.cachePolicy == .reload
        let followUpCost = leads.reduce(originalBytes) { total, lead in
            let size = ownDecode(lead)
            return total + (Int.checkedProduct(size.width * 4, size.height) ?? Int.max / 4)
        }
        return FamilyJob { [self, leads] in
            if !leads.isEmpty, familyJobs.enter(cost: followUpCost) {
                afterAnswer.run { [self] in
                    defer { familyJobs.leave(cost: followUpCost) }
                    if let hook = familyHook.withLock({ $0 }) { await hook() }
                    // Not a part of the answer that started them (nor of one that joins them).
                    await Traces.outsideRequests { await followUps(leads, of: request, sourceKey: sourceKey, reload: reload) }
                }
            }
            guard !covered.isEmpty, familyJobs.enter(cost: cost) else { return }
            afterAnswer.run { [self] in
                defer { familyJobs.leave(cost: cost) }
                if let hook = familyHook.withLock({ $0 }) { await hook() }
                _ = try? await tasks.decodeSlots.run(priority: PriorityHandle(.veryLow)) { () async throws(PipelineError) in
                    try await BlockingIOPool.decoding.performCancellable { () throws(PipelineError) in
                        // A purge since the answer: nothing to make (and nothing of the source's
                        // newer work to take back). One during the making: what was stored goes.
                        guard self.purges.isCurrent(mark) else { return }
                        defer { self.undoIfPurged(mark, sourceKey: sourceKey, entityID: ids.entity) }
                        let start = ContinuousClock.now
                        var images: [String: Bitmap] = [:]
                        // A reload remakes them all (what the tiers hold may be stale).
                        for format in covered where reload || !self.holds(format, sourceKey: sourceKey, ids: ids) {
                            images[format.name] = try? format.process(decoded)
                        }
                        self.metrics.stage(.process, since: start)
                        self.storeMade(images, request: request, sourceKey: sourceKey, ids: ids, freshUntil: freshUntil)
                        self.metrics.familyImages.increment(by: images.count)
                    }
                }
            }
        }
    }

    /// The family formats of another decode scale than an answer's, each made by a background
    /// request of its own (`.veryLow`), unless a tier has it: the same work a foreground request
    /// for it would start, so that one joins it; its family job then makes the rest of its scale.
    /// (After a reload, made again whatever the tiers hold, from the original the reload stored:
    /// never a download of its own.)
    private func followUps(_ leads: [ImageFormat], of request: ImageRequest, sourceKey: String, reload: Bool) async {
        for lead in leads {
            var follow = request
            follow.processing = .format(lead.name)
            follow.priority = .veryLow
            follow.deadline = nil
            follow.cachePolicy = .useCache
            follow.isFamilyFollowUp = true
            // (An entity may name another source per format: the lead's own.)
            let sourceKey = follow.sourceKey ?? sourceKey
            guard reload || !holds(lead, sourceKey: sourceKey, ids: Self.entityIDs(follow, sourceKey: sourceKey)),
                  let key = bitmapKey(for: follow, sourceKey: sourceKey) else { continue }
            if !reload, await cachedBitmap(follow, key: key, format: lead) != nil { continue }
            let made = try? await decoded(follow, key: key, format: lead, frames: nil, waiter: nextID(), priority: .veryLow)
            made?.family?.start()
        }
    }

    /// Whether a tier already holds `format` of the source (its table, or the memory tier).
    private func holds(_ format: ImageFormat, sourceKey: String, ids: (entity: UUID, source: UUID)) -> Bool {
        if let table = tables[format.name] { return table.contains(ids.entity, sourceID: ids.source) }
        return familyBitmapKey(format.name, sourceKey: sourceKey).map { memory.contains($0.memory) } ?? false
    }
}
