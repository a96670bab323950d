/// Something an operation's body does when it runs, declared while the sequence is built.
enum ModelBodyAction: Codable, Hashable, Sendable {
    /// Cancels another operation (one that depends on this one, so the model knows it has not
    /// started yet).
    case cancel(Int)
    /// `OpQueue.current!.addOperation(op)`: a group's child adds to its group (defect 13's shape).
    case addToCurrentQueue(Int)
    /// `Op.current!.produce(op)`.
    case produce(Int)
    /// `Op.current!.group!.addChild(op)`.
    case addToOwnGroup(Int)
    /// `dependency.waitUntilFinished()` on one of its own (finished) dependencies: returns at once.
    case waitForDependency(Int)

    /// The operation the action adds somewhere, if it adds one.
    var added: Int? {
        switch self {
        case .addToCurrentQueue(let op), .produce(let op), .addToOwnGroup(let op): op
        case .cancel, .waitForDependency: nil
        }
    }

    var swift: String {
        switch self {
        case .cancel(let op): "op\(op).cancel()"
        case .addToCurrentQueue(let op): "OpQueue.current!.addOperation(op\(op))"
        case .produce(let op): "Op.current!.produce(op\(op))"
        case .addToOwnGroup(let op): "Op.current!.group!.addChild(op\(op))"
        case .waitForDependency(let op): "op\(op).waitUntilFinished()"
        }
    }
}
