/// A plan that cannot be made: a value out of its range or past a limit, named in the text
/// (`"dpr is above 0 and at most 8"`). Every URL style answers it with a 400.
public enum PlanError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A value out of range or past a limit; the text names it.
    case invalid(String)

    /// The refusal's text.
    public var description: String {
        switch self {
        case .invalid(let text): text
        }
    }
}
