import EaselCodecs

/// The result extended to the box (imgproxy's `extend`, thumbor's `fill` with `fit-in`), placed
/// by `extendGravity`, in `extendColour`, else `background`, else white (or transparent, or
/// the image's mean colour).
enum ExtendStep: PlanStep {
    static func add(to chain: inout PlanChain) throws(PlanError) {
        guard !chain.madeByImgproxyGeometry else { return }
        let plan = chain.plan
        guard plan.extend, plan.width > 0 || plan.height > 0 else { return }
        // A side not asked for is not extended (the canvas is never smaller than the image).
        var pad = canvas(chain, width: plan.width > 0 ? chain.box.width : 1, height: plan.height > 0 ? chain.box.height : 1,
                         gravity: plan.extendGravity)
        pad.autoColour = plan.autoExtendColour
        // (A turned box pads to the turned size: thumbor's adaptive-fit-in with fill.)
        pad.adaptive = plan.fitVariant?.adaptive == true
        chain.append(pad)
    }

    /// A canvas of `width × height` in the extension's colour, the image placed by `gravity`
    /// (nil: the centre).
    static func canvas(_ chain: PlanChain, width: Int, height: Int, gravity: Gravity?) -> Pad {
        let plan = chain.plan
        let colour = plan.extendColour ?? plan.background ?? (255, 255, 255)
        return Pad(width: width, height: height, red: colour.red, green: colour.green, blue: colour.blue,
                   alpha: plan.transparentExtend ? 0 : 255, gravity: (gravity ?? .center).scalingOffsets(by: plan.dpr))
    }
}
