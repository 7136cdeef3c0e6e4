/// Decides whether work may start (a server's admission: a bounded queue); the pipeline asks
/// only on a miss of the memory tier, and says when the work is over.
public protocol WorkAdmission: Sendable {
    /// True to let the work start (then `leave()` follows); false refuses it (`.overloaded`).
    func enter() -> Bool
    /// Marks the end of work that `enter()` let start (once per `true`).
    func leave()
}
