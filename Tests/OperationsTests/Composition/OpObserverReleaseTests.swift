import Testing
@testable import Operations

/// An observer that holds its operation does not keep it alive once it finished.
@Suite struct OpObserverReleaseTests {
    final class Holder: OpObserver, @unchecked Sendable {
        // @unchecked Sendable: `operation` is written once, before the operation is shared.
        var operation: Op?
    }

    @Test func anObserverThatHoldsItsOperationIsLetGoAfterDidFinish() {
        weak var weakOperation: Op?
        weak var weakObserver: Holder?
        do {
            let operation = BlockOp {}
            let observer = Holder()
            observer.operation = operation   // observer → operation → observer
            operation.addObserver(observer)
            weakOperation = operation
            weakObserver = observer
            OpQueue().addOperation(operation)
            operation.waitUntilFinished()
        }
        #expect(eventually { weakOperation == nil && weakObserver == nil })
    }
}
