import EaselCodecs
import EaselSupport

/// The plan's steps, in the one order they run (as imgproxy's `mainPipeline`): trim; the turn
/// and flip when they come first (imgproxy's order); crop; the zoom of a plan without a size;
/// the resize (or thumbor's fit-in variants); minimum size; the flip when it comes after
/// (thumbor's); extend and aspect extend; blur, sharpen, pixelate, grayscale; the colour and
/// tone steps in the order given; frame; rounded corners; padding; marks; the result limit;
/// background. Every range is checked here, with a `PlanError` naming it.
extension ImagePlan {
    /// The processor chain, checked against the limits (`limit` per side, `maxPixels` in all).
    /// A request that is just a size with `fit`, `fill` or `exact` becomes exactly the native
    /// ad-hoc chain (`[Resize(w, h, mode)]`), so it shares that cache entry.
    /// `marks` are the images of `watermarks`, in their order (none: the marks are left out).
    public func processors(limit: Int, maxPixels: Int, marks: [MarkImage] = [], frameImage: PreparedWatermark? = nil) throws(PlanError) -> [any ImageProcessor] {
        // `maxResultSide` with a known box: the chain made at a lower DPR, so that the largest
        // the result can be (the box or the minimum size, zoomed, with the padding) fits, as
        // imgproxy lowers its scale; the result is made small rather than shrunk afterwards (the
        // closing fit in `chain` then changes nothing).
        // (The URL's own DPR is checked first: a lowered one must not let a refused one through.)
        guard dpr > 0, dpr <= 8, dpr.isFinite else { throw PlanError.invalid("dpr is above 0 and at most 8") }
        if let side = maxResultSide, side > 0, width > 0, height > 0 {
            let zoomX = zoom?.x ?? 1, zoomY = zoom?.y ?? 1
            let padX = Double((padding?.left ?? 0) + (padding?.right ?? 0)), padY = Double((padding?.top ?? 0) + (padding?.bottom ?? 0))
            let outWidth = (Double(max(width, minWidth)) * zoomX + padX) * dpr, outHeight = (Double(max(height, minHeight)) * zoomY + padY) * dpr
            if max(outWidth, outHeight) > Double(side) {
                var lowered = self
                lowered.dpr = dpr * Double(side) / max(outWidth, outHeight)
                return try lowered.chain(limit: limit, maxPixels: maxPixels, marks: marks, frameImage: frameImage)
            }
        }
        return try chain(limit: limit, maxPixels: maxPixels, marks: marks, frameImage: frameImage)
    }

    private func chain(limit: Int, maxPixels: Int, marks: [MarkImage], frameImage: PreparedWatermark?) throws(PlanError) -> [any ImageProcessor] {
        var chain: [any ImageProcessor] = []
        if let trim { chain.append(trim) }
        func turn() throws(PlanError) {
            if rotation != 0 {
                do { chain.append(try QuarterTurn(degrees: -rotation)) } catch { throw PlanError.invalid("rotate takes 0, 90, 180 or 270 (or more turns)") }
            }
        }
        func flip() {
            if flipHorizontal || flipVertical { chain.append(Flip(horizontal: flipHorizontal, vertical: flipVertical)) }
        }
        if turnsFirst {
            try turn()
            flip()
        }
        if var crop {
            if case .size(let width, let height, _) = crop {
                guard width >= 0, height >= 0, width <= Double(limit) * 8, height <= Double(limit) * 8 else {
                    throw PlanError.invalid("crop sizes are 0–\(limit * 8)")
                }
                crop = .size(width: width, height: height, gravity: cropGravity ?? gravity)
            }
            chain.append(RegionCrop(crop))
        }
        guard dpr > 0, dpr <= 8, dpr.isFinite else { throw PlanError.invalid("dpr is above 0 and at most 8") }
        guard width >= 0, height >= 0 else { throw PlanError.invalid("width and height are 0 or more") }
        if !turnsFirst { try turn() }
        // Steps that grow the image stay within the limits too (a 422 past them).
        let outputLimit = OutputLimit(side: limit, pixels: maxPixels)
        // A zoom without a size scales the source itself (then the fit to the limit below
        // changes nothing within it).
        if let zoom, width == 0, height == 0, zoom.x != 1 || zoom.y != 1 {
            do { chain.append(try Scale(x: zoom.x, y: zoom.y, limit: outputLimit)) } catch {
                throw PlanError.invalid("zoom is above 0 and at most \(Scale.maximumFactor)")
            }
        }
        let zoomX = zoom?.x ?? 1, zoomY = zoom?.y ?? 1
        // In Double first: sides far past the limit are refused before any integer conversion.
        let scaledWidth = (Double(width) * dpr * zoomX).rounded(), scaledHeight = (Double(height) * dpr * zoomY).rounded()
        guard scaledWidth <= Double(limit), scaledHeight <= Double(limit), scaledWidth * scaledHeight <= Double(maxPixels) else {
            throw PlanError.invalid("the result is at most \(limit) pixels a side and \(maxPixels) pixels in all")
        }
        // A side that was asked for stays at least 1 pixel, however small the dpr.
        var w = width > 0 ? max(1, Int(checked: scaledWidth)) : 0, h = height > 0 ? max(1, Int(checked: scaledHeight)) : 0
        var mode = self.mode
        if w == 0 || h == 0 {
            // One side follows the other (scaled to the given side, in every mode); none: the
            // source's size, within the limit.
            if w == 0 && h == 0 { w = limit; h = limit }
            mode = .fit
            if w == 0 { w = limit }
            if h == 0 { h = limit }
            if w * h > maxPixels { h = max(1, maxPixels / w) }
        }
        // Without a size there is nothing for the dpr to multiply but the source's own size,
        // which this chain does not know: enlarging by the dpr would be silently dropped.
        if width == 0, height == 0, dpr != 1, enlarge == true {
            throw PlanError.invalid("dpr with enlarge needs a width or a height")
        }
        let upscale = (width == 0 && height == 0) ? false : enlarge
        if let fitVariant, width > 0, height > 0 {
            chain.append(FitIn(width: w, height: h, adaptive: fitVariant.adaptive, full: fitVariant.full, upscale: upscale ?? false,
                               limit: outputLimit))
        } else {
            chain.append(Resize(width: w, height: h, mode: mode, upscale: upscale,
                                gravity: mode == .fit || mode == .exact ? .center : gravity.scalingOffsets(by: dpr)))
        }
        if minWidth > 0 || minHeight > 0 {
            chain.append(MinimumSize(width: Int(checked: (Double(minWidth) * dpr).rounded()), height: Int(checked: (Double(minHeight) * dpr).rounded()),
                                     limit: outputLimit))
        }
        // thumbor flips while it resizes: after its crops, before its `fill`.
        if !turnsFirst { flip() }
        let extendRGB = extendColour ?? background ?? (255, 255, 255)
        if extend, width > 0 || height > 0 {
            // A side not asked for is not extended (the canvas is never smaller than the image).
            let colour = extendRGB
            var pad = Pad(width: width > 0 ? w : 1, height: height > 0 ? h : 1, red: colour.red, green: colour.green, blue: colour.blue,
                          alpha: transparentExtend ? 0 : 255, gravity: (extendGravity ?? .center).scalingOffsets(by: dpr))
            pad.autoColour = autoExtendColour
            // (A turned box pads to the turned size: thumbor's adaptive-fit-in with fill.)
            pad.adaptive = fitVariant?.adaptive == true
            chain.append(pad)
        }
        if aspectExtend, width > 0, height > 0 {
            let pad = Pad(width: w, height: h, red: extendRGB.red, green: extendRGB.green, blue: extendRGB.blue,
                          alpha: transparentExtend ? 0 : 255, gravity: (aspectExtendGravity ?? .center).scalingOffsets(by: dpr))
            chain.append(AspectExtend(pad, limit: outputLimit))
        }
        if let blur {
            guard blur > 0, blur <= 250 else { throw PlanError.invalid("blur is above 0 and at most 250") }
            if let blurRadius {
                guard blurRadius >= 1, blurRadius <= 150 else { throw PlanError.invalid("blur radius is 1–150") }
                chain.append(GaussianBlur(sigma: blur, radius: blurRadius))
            } else {
                chain.append(GaussianBlur(sigma: blur))
            }
        }
        if let sharpen {
            guard sharpen > 0, sharpen <= 10, let step = try? Sharpen.validated(sigma: sharpen) else {
                throw PlanError.invalid("sharpen is above 0 and at most 10")
            }
            chain.append(step)
        }
        if let waveletSharpen { chain.append(waveletSharpen) }
        if let pixelate {
            do { chain.append(try Pixelate(size: max(1, Int(checked: (Double(pixelate) * dpr).rounded())))) } catch {
                throw PlanError.invalid("pixelate is 1–\(Pixelate.maximumSize)")
            }
        }
        if grayscale { chain.append(Grayscale()) }
        chain.append(contentsOf: adjustments)
        if frame != nil, let frameImage {
            do { chain.append(try NinePatchFrame(frame: frameImage.image, frameIdentifier: frameImage.identifier, limit: outputLimit)) } catch {
                throw PlanError.invalid("bad frame: \(error)")
            }
        }
        if let cornerRadii {
            guard cornerRadii.x >= 0, cornerRadii.y >= 0, cornerRadii.x <= Double(limit), cornerRadii.y <= Double(limit) else {
                throw PlanError.invalid("round_corner radii are 0–\(limit)")
            }
            chain.append(RoundedCorners(radiusX: cornerRadii.x, radiusY: cornerRadii.y, fill: cornerColour))
        }
        if let padding {
            func scaled(_ side: Int) -> Int { Int(checked: (Double(side) * dpr).rounded()) }
            let colour = background ?? (255, 255, 255)
            do {
                var border = try Border(top: scaled(padding.top), right: scaled(padding.right), bottom: scaled(padding.bottom),
                                        left: scaled(padding.left), red: colour.red, green: colour.green, blue: colour.blue,
                                        alpha: background == nil ? 0 : 255)
                border.limit = outputLimit
                chain.append(border)
            } catch {
                throw PlanError.invalid("padding is 0–\(Border.maximumWidth) pixels a side")
            }
        }
        guard watermarks.count <= Self.maxWatermarks else { throw PlanError.invalid("at most \(Self.maxWatermarks) watermarks a request") }
        for (watermark, mark) in zip(watermarks, marks) {
            guard (0...1).contains(watermark.opacity), (0...1).contains(watermark.scale), (0...1).contains(watermark.heightScale),
                  (0...Watermark.maxShadowSigma).contains(watermark.shadow) else {
                throw PlanError.invalid("watermark opacity and scale are 0–1, its shadow 0–\(Int(Watermark.maxShadowSigma))")
            }
            // Offsets, shadows and sizes are in the pixels of the requested size, so they scale
            // with the dpr.
            func scaled(_ value: Int) -> Int { Int(checked: (Double(value) * dpr).rounded()) }
            do {
                var step = try Watermark.validated(mark: mark.image, markIdentifier: mark.identifier,
                                                   opacity: watermark.opacity, position: watermark.position,
                                                   offsetX: scaled(watermark.offsetX), offsetY: scaled(watermark.offsetY),
                                                   scale: watermark.scale, heightScale: watermark.heightScale)
                // The box in the pixels of the result (its identity is in the step's).
                step.box = watermark.size.map { (scaled($0.width), scaled($0.height)) }
                step.shadowSigma = min(Watermark.maxShadowSigma, watermark.shadow * dpr)
                step.rotation = watermark.rotation
                chain.append(step)
            } catch {
                throw PlanError.invalid("bad watermark: \(error)")
            }
        }
        if let maxResultSide {
            // Where `processors` could not lower the DPR (a side not asked for, so no known
            // box): the result, marks and padding included, scaled down together (never up).
            guard maxResultSide > 0 else { throw PlanError.invalid("max_result_dimension is above 0") }
            chain.append(Resize(width: min(maxResultSide, limit), height: min(maxResultSide, limit), mode: .fit, upscale: false))
        }
        if let background, !transparentExtend {
            chain.append(Flatten(red: background.red, green: background.green, blue: background.blue))
        }
        return chain
    }
}
