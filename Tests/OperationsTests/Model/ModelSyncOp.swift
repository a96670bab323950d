import Operations

/// A model operation with a synchronous body that only records (``ModelOpKind/sync``).
final class ModelSyncOp: Op, @unchecked Sendable {
    // @unchecked Sendable: both stored properties are immutable.
    let id: Int
    let recorder: ModelRecorder

    init(id: Int, recorder: ModelRecorder) {
        self.id = id
        self.recorder = recorder
        super.init()
    }

    override func main() {
        recorder.bodyStarts(self, id: id)
        recorder.bodyEnds(id)
    }
}
