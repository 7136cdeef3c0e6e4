import EaselCodecs

/// A border (imgproxy's `padding`: top, right, bottom, left), times the DPR, in `background` or
/// transparent.
enum PaddingStep: PlanStep {
    static func add(to chain: inout PlanChain) throws(PlanError) {
        guard !chain.madeByImgproxyGeometry else { return }
        guard let padding = chain.plan.padding else { return }
        let background = chain.plan.background, colour = background ?? (255, 255, 255)
        do {
            var border = try Border(top: chain.scaled(padding.top), right: chain.scaled(padding.right), bottom: chain.scaled(padding.bottom),
                                    left: chain.scaled(padding.left), red: colour.red, green: colour.green, blue: colour.blue,
                                    alpha: background == nil ? 0 : 255)
            border.limit = chain.outputLimit
            chain.append(border)
        } catch {
            throw .invalid("padding is 0–\(Border.maximumWidth) pixels a side")
        }
    }
}
