import HTTPTypes
import Hummingbird

/// CORS for image answers (`DeliverySettings.corsAllowOrigins`): `Access-Control-Allow-Origin`
/// on every answer a listed origin (or any, with `*`) may read, errors included, and preflights
/// (`OPTIONS` with `Access-Control-Request-Method`) answered at once: `GET` and `HEAD`, the
/// request headers asked for, kept `corsMaxAge` seconds. With a list, answers vary on `Origin`.
/// Outermost, so that it sees every answer the metrics middleware makes of an error.
struct CORSMiddleware<Context: RequestContext>: RouterMiddleware {
    let origins: Set<String>
    let maxAge: Int
    var anyOrigin: Bool { origins.contains("*") }

    init(origins: [String], maxAge: Int) {
        self.origins = Set(origins)
        self.maxAge = maxAge
    }

    /// The `Access-Control-Allow-Origin` value for a request from `origin`, or nil.
    func allowed(_ origin: String?) -> String? {
        if anyOrigin { return "*" }
        guard let origin, origins.contains(origin) else { return nil }
        return origin
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let allow = allowed(request.headers[.origin])
        if request.method == .options, request.headers[.accessControlRequestMethod] != nil {
            var headers: HTTPFields = [:]
            if let allow {
                headers[.accessControlAllowOrigin] = allow
                headers[.accessControlAllowMethods] = "GET, HEAD"
                if let asked = request.headers[.accessControlRequestHeaders] { headers[.accessControlAllowHeaders] = asked }
                headers[.accessControlMaxAge] = String(maxAge)
            }
            if !anyOrigin { headers[.vary] = "Origin" }
            return Response(status: .noContent, headers: headers)
        }
        var response = try await next(request, context)
        if let allow {
            response.headers[.accessControlAllowOrigin] = allow
            response.headers[.accessControlExposeHeaders] = "ETag, Content-Length, Content-Disposition"
        }
        if !anyOrigin { response.headers[.vary] = response.headers[.vary].map { $0 + ", Origin" } ?? "Origin" }
        return response
    }
}
