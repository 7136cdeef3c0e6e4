import EaselSupport
import Foundation

/// `answer(for:)`: what every caller of the pipeline ends with — the encoding decided, its `Vary`,
/// the answer from the tiers or made, and the fallback image for a missing or broken source.
extension ImagePipeline {
    /// The answer for `request`: the pipeline decides its encoding (`request.output` and
    /// `request.client`, else `request.encoding`) and its full `Vary` (`Accept` when negotiated,
    /// the client's hints, Save-Data when honoured), answers from the encoded memory tier when it
    /// can, and otherwise — once `admission` lets it — from the first tier that has it, making it
    /// if none does. `abandonWhen`, when it returns before the answer is ready (a client that
    /// left), ends this request's share of the work (`.cancelled`; the shared work goes on for
    /// others and stops otherwise).
    ///
    /// When the source is missing or cannot be decoded (`PipelineError.fallsBack`) and the
    /// request names a fallback image, that image is answered instead, made the same way and
    /// cached under its own identity, with `fallbackFor` set to the source's error; if it fails
    /// too, the source's error is thrown.
    public func answer(for request: ImageRequest, admission: (any WorkAdmission)? = nil,
                       abandonWhen: (@Sendable () async -> Void)? = nil) async throws(PipelineError) -> EncodedResponse {
        let (decided, vary) = decided(request)
        var response: EncodedResponse
        do throws(PipelineError) {
            response = try await encodedResponse(for: decided, id: nextID(), admission: admission, abandonWhen: abandonWhen)
        } catch where error.fallsBack && request.fallback != nil {
            response = try await fallbackAnswer(request, error: error, admission: admission, abandonWhen: abandonWhen)
        }
        response.vary = vary
        return response
    }

    /// The fallback image of `request` (as asked, not yet decided), answered for the source's
    /// error: made with the request's processing, output, client, limits, marks and deadline,
    /// from its first page (a page, embedded thumbnail or video frame of the source is not one
    /// of the fallback's), cached under its own key.
    private func fallbackAnswer(_ request: ImageRequest, error sourceError: PipelineError, admission: (any WorkAdmission)?,
                                abandonWhen: (@Sendable () async -> Void)?) async throws(PipelineError) -> EncodedResponse {
        guard let image = request.fallback else { throw sourceError }
        var asked = ImageRequest(url: image.url, processing: request.processing, priority: request.priority, cacheKey: image.cacheKey)
        asked.client = request.client
        asked.output = request.output
        asked.encoding = request.encoding
        // The URL's own limits on its source hold for the image that stands in for it.
        asked.sourceLimits = request.sourceLimits
        asked.deadline = request.deadline
        asked.madeWith = request.madeWith
        let fallback = decided(asked).request
        do throws(PipelineError) {
            var response = try await encodedResponse(for: fallback, id: nextID(), admission: admission, abandonWhen: abandonWhen)
            response.fallbackFor = sourceError
            response.fallbackSource = fallback.sourceKey
            logger.info("answered with the fallback image", metadata: ["error": "\(sourceError)"])
            return response
        } catch .overloaded {
            throw .overloaded
        } catch .cancelled {
            throw .cancelled
        } catch {
            logger.warning("the fallback image failed too", metadata: ["error": "\(sourceError)", "fallback error": "\(error)"])
            throw sourceError
        }
    }

    /// `request` with the encoding its output policy decides for its client, and the answer's
    /// `Vary`; the encoding as it is without a policy.
    func decided(_ request: ImageRequest) -> (request: ImageRequest, vary: String?) {
        guard let policy = request.output else { return (request, request.client?.vary(accept: false)) }
        var request = request
        let decision = decisions.decision(policy, for: request.client)
        // A page other than the first is a still: no animation alternatives in its key.
        request.encoding = request.page == 0 ? decision.encoding : decision.encoding.still
        let vary = request.client.map { $0.vary(accept: decision.vary != nil) } ?? decision.vary
        return (request, vary)
    }
}
