/// What kind of operation a step of a model sequence makes: the library's operation types, each
/// with a body that only records what happens (see ``ModelRecorder``).
enum ModelOpKind: String, Codable, Hashable, Sendable, CaseIterable {
    /// An `Op` subclass whose `main()` records and returns.
    case sync
    /// A `BlockOp` with two execution blocks.
    case blocks
    /// An `AsyncOp` whose `execute()` calls `finish()` before returning.
    case asyncInline
    /// An `AsyncOp` whose `execute()` calls `finish()` later, from another thread.
    case asyncOtherThread
    /// An `AsyncOp` that calls `finish(throwing:)` from another thread: it fails.
    case asyncThrowing
    /// An `AsyncOp` that cancels itself from another thread once it runs, and is finished by its
    /// own `didCancel` observer (the shape of defect 2).
    case asyncFinishedByDidCancel
    /// An `AsyncOp` with an `async` body (it runs in a task, which finishes the operation when
    /// the body returns: the operations of the queue that start next must still start on the
    /// queue's threads, not in that task, the shape of defect 8).
    case asyncBody
    /// A `GroupOp`.
    case group
    /// A `GroupOp` subclass that signals after `super.execute()` returns; its children wait for
    /// that signal (they must not run inside `execute()`: the shape of defect 12).
    case groupWithTail

    var isGroup: Bool { self == .group || self == .groupWithTail }

    /// Whether the operation's body can run actions (groups have no body of their own).
    var hasBody: Bool { !isGroup }

    /// The Swift that makes it, for printed sequences.
    var creation: String {
        switch self {
        case .sync: "RecordingOp()"
        case .blocks: "BlockOp(twoBlocks)"
        case .asyncInline: "AsyncOp(finishesInExecute)"
        case .asyncOtherThread: "AsyncOp(finishesOnAnotherThread)"
        case .asyncThrowing: "AsyncOp(failsOnAnotherThread)"
        case .asyncFinishedByDidCancel: "AsyncOp(cancelsItselfAndIsFinishedByDidCancel)"
        case .asyncBody: "AsyncOp { await Task.yield() }"
        case .group: "GroupOp()"
        case .groupWithTail: "GroupOp(signalsAfterSuperExecute)"
        }
    }
}
