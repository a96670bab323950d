import Operations

/// A model group: records its start and, for ``ModelOpKind/groupWithTail``, signals once
/// `super.execute()` has returned; its children wait for that signal (issue 22, defect 12: a
/// group must not run its children inside `execute()`).
final class ModelGroupOp: GroupOp, @unchecked Sendable {
    // @unchecked Sendable: all stored properties are immutable (`tail` is thread-safe).
    let id: Int
    let recorder: ModelRecorder
    let signalsAfterExecute: Bool
    private let tail = ModelLatch()

    init(id: Int, recorder: ModelRecorder, signalsAfterExecute: Bool) {
        self.id = id
        self.recorder = recorder
        self.signalsAfterExecute = signalsAfterExecute
        super.init()
    }

    override func execute() {
        recorder.bodyStarts(self, id: id)
        super.execute()
        if signalsAfterExecute { tail.open() }
    }

    /// Waits until `execute()` has returned; `false` if it had not after half the time a phase
    /// may take (the child runs inside `execute()`, which waits for it), so that this reads as
    /// what it is, not as a hang.
    func waitForTail() -> Bool {
        tail.wait(seconds: recorder.phaseTimeout / 2)
    }
}
