/// An ``OpObserver`` whose `did` callbacks run elsewhere: as operations of a queue, or on an
/// actor (see ``OpObserver/delivered(on:)`` and ``OpObserver/delivered(to:)``).
struct RedeliveredObserver<Base: OpObserver>: OpObserver {
    let base: Base
    /// Runs a callback where it is to run, in the order given.
    let deliver: @Sendable (@escaping @Sendable () -> Void) -> Void

    // The operation waits for these: they run where they are delivered.
    func willExecute(_ operation: Op) { base.willExecute(operation) }
    func willFinish(_ operation: Op, error: (any Error)?) { base.willFinish(operation, error: error) }
    func willAdd(_ operation: Op, operation added: Op) { base.willAdd(operation, operation: added) }

    func didAttach(to operation: Op) { deliver { [base] in base.didAttach(to: operation) } }
    func didExecute(_ operation: Op) { deliver { [base] in base.didExecute(operation) } }
    func didCancel(_ operation: Op, error: (any Error)?) { deliver { [base] in base.didCancel(operation, error: error) } }
    func didFinish(_ operation: Op, error: (any Error)?) { deliver { [base] in base.didFinish(operation, error: error) } }
    func didProduce(_ operation: Op, operation produced: Op) { deliver { [base] in base.didProduce(operation, operation: produced) } }
    func didAdd(_ operation: Op, operation added: Op) { deliver { [base] in base.didAdd(operation, operation: added) } }
}
