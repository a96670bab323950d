import Dispatch
import Operations

/// A model operation that overrides the synchronous `execute()` of `AsyncOp` and finishes the way
/// its kind says (``ModelOpKind/asyncInline`` and the other asynchronous kinds).
final class ModelAsyncOp: AsyncOp, @unchecked Sendable {
    // @unchecked Sendable: all stored properties are immutable.
    let id: Int
    let recorder: ModelRecorder
    let kind: ModelOpKind

    init(id: Int, recorder: ModelRecorder, kind: ModelOpKind) {
        self.id = id
        self.recorder = recorder
        self.kind = kind
        super.init()
        if kind == .asyncFinishedByDidCancel {
            // Cancelled while it runs, its own observer finishes it (issue 22, defect 2).
            addObserver(BlockObserver(didCancel: { operation, _ in
                guard operation.isExecuting, let operation = operation as? ModelAsyncOp else { return }
                operation.recorder.bodyEnds(operation.id)
                operation.finish()
            }))
        }
    }

    override func execute() {
        recorder.bodyStarts(self, id: id)
        switch kind {
        case .asyncInline:
            recorder.bodyEnds(id)
            finish()
        case .asyncOtherThread:
            DispatchQueue.global().async { [self] in
                recorder.bodyEnds(id)
                finish()
            }
        case .asyncThrowing:
            DispatchQueue.global().async { [self] in
                recorder.bodyEnds(id)
                finish(throwing: ModelWorkError.thrown)
            }
        case .asyncFinishedByDidCancel:
            DispatchQueue.global().async { [self] in
                cancel()
            }
        case .sync, .blocks, .asyncBody, .group, .groupWithTail:
            preconditionFailure("ModelAsyncOp made for \(kind)")
        }
    }
}
