import Testing

/// The suites that put `easel serve` under heavy load as its own process, run one after the
/// other: each measures the server under its own load (thousands of idle connections; twenty
/// large decodes at once), which the other's would distort on a small machine.
@Suite("easel serve under load, one suite at a time", .serialized)
struct ServeUnderLoad {}
