import Operations

/// A model operation with an `async` body (``ModelOpKind/asyncBody``): `AsyncOp` runs it in a
/// task and finishes the operation when it returns.
final class ModelAsyncBodyOp: AsyncOp, @unchecked Sendable {
    // @unchecked Sendable: both stored properties are immutable.
    let id: Int
    let recorder: ModelRecorder

    init(id: Int, recorder: ModelRecorder) {
        self.id = id
        self.recorder = recorder
        super.init()
    }

    override func execute() async throws {
        recorder.bodyStarts(self, id: id)
        await Task.yield()
        recorder.bodyEnds(id)
    }
}
