import Dispatch
import Operations
import Synchronization

/// A `DispatchGroup` next to operations with a final operation that depends on all of them: run
/// several jobs, some of them finishing in a callback, then do something once all are done.
///
/// What the operation form adds: the final step names what it waits for
/// (``Op/dependencies``) instead of a count that every `enter()` and `leave()` must keep balanced
/// (a missing `leave()` hangs for good, an extra one crashes); it is an operation itself, so
/// other work can depend on it, on any queue; it sees which parts were cancelled; and the parts
/// can be cancelled, given a width or priorities. What GCD keeps: a group is a counter, the
/// cheapest join there is, and `notify` needs no queue of operations to be set up.
enum GroupComparison {
    static let example = Example(
        name: "gcd-group",
        title: "DispatchGroup vs a final operation that depends on the others",
        source: "GCD: DispatchGroup",
        expected: [
            "GCD group.wait() returned: 4 parts done",
            "GCD group.notify: total 10",
            "OpQueue: the final operation ran after 4 parts: total 10",
            "OpQueue waitUntilAllOperationsAreFinished() returned: 0 operations left",
            "OpQueue: part 2 was cancelled; the final operation still ran and saw 1 cancelled dependency: total 8",
        ]
    ) { output in
        // GCD: three blocks submitted with the group, and one callback-style job that enters the
        // group itself and leaves it from its callback.
        let work = DispatchQueue(label: "gcd-group.work", attributes: .concurrent)
        let group = DispatchGroup()
        let gcdParts = Parts()
        for part in 1...3 {
            work.async(group: group) { gcdParts.add(part) }
        }
        let callbacks = DispatchQueue(label: "gcd-group.callbacks")
        group.enter()
        callbacks.asyncAfter(deadline: .now() + .milliseconds(1)) {
            gcdParts.add(4)
            group.leave()
        }
        // `notify` runs a block once the group is empty (here on a serial queue, where apps use
        // the main queue); the semaphore only lets this synchronous example print what it saw.
        let notified = Parts()
        let notifyRan = DispatchSemaphore(value: 0)
        group.notify(queue: callbacks) {
            notified.add(gcdParts.total)
            notifyRan.signal()
        }
        group.wait()
        output.line("GCD group.wait() returned: \(gcdParts.count) parts done")
        notifyRan.wait()
        output.line("GCD group.notify: total \(notified.total)")

        // Operations: the parts, a callback-style part as an `AsyncOp`, and a final operation
        // that depends on each of them (the counterpart of `notify`); the queue is waited for
        // with `waitUntilAllOperationsAreFinished()` (the counterpart of `wait`).
        let queue = OpQueue()
        queue.name = "gcd-group"
        let opParts = Parts()
        let finalTotal = Parts()
        let parts = makeParts(adding: opParts, callbackQueue: callbacks)
        let final = BlockOp { finalTotal.add(opParts.total) }
        for part in parts {
            final.addDependency(part)
        }
        queue.addOperations(parts + [final], waitUntilFinished: false)
        queue.waitUntilAllOperationsAreFinished()
        output.line("OpQueue: the final operation ran after \(final.dependencies.count) parts: total \(finalTotal.total)")
        output.line("OpQueue waitUntilAllOperationsAreFinished() returned: \(queue.operationCount) operations left")

        // A part cancelled before it started finishes without running; the final operation
        // still runs, and can tell from its dependencies. (The queue is suspended so that part 2
        // cannot have started before it is cancelled.)
        let someParts = Parts()
        let someTotal = Parts()
        let cancelledSeen = Parts()
        let fewerParts = makeParts(adding: someParts, callbackQueue: callbacks)
        let check = BlockOp()
        check.addExecutionBlock { [unowned check] in
            cancelledSeen.add(check.dependencies.filter(\.isCancelled).count)
            someTotal.add(someParts.total)
        }
        for part in fewerParts {
            check.addDependency(part)
        }
        queue.isSuspended = true
        queue.addOperations(fewerParts + [check], waitUntilFinished: false)
        fewerParts[1].cancel()
        queue.isSuspended = false
        queue.waitUntilAllOperationsAreFinished()
        output.line("OpQueue: part 2 was cancelled; the final operation still ran and saw \(cancelledSeen.total) cancelled dependency: total \(someTotal.total)")
    }

    /// Parts 1 to 3 as block operations, and part 4 as an `AsyncOp` that finishes in a callback
    /// on `callbackQueue` (the counterpart of `enter()` and `leave()`).
    private static func makeParts(adding parts: Parts, callbackQueue: DispatchQueue) -> [Op] {
        let blocks: [Op] = (1...3).map { part in BlockOp { parts.add(part) } }
        let callback = CallbackPart(callbackQueue: callbackQueue) { parts.add(4) }
        return blocks + [callback]
    }

    /// A part whose work ends in a callback: ``execute()`` starts it and the callback calls
    /// ``AsyncOp/finish()``, where GCD's job calls `leave()`. (An `AsyncOp` with an `async`
    /// closure that awaits the callback would do as well.)
    final class CallbackPart: AsyncOp, @unchecked Sendable {
        // @unchecked Sendable: `AsyncOp` is an open class marked `@unchecked Sendable`; this
        // subclass adds only constants.
        private let callbackQueue: DispatchQueue
        private let work: @Sendable () -> Void

        init(callbackQueue: DispatchQueue, work: @escaping @Sendable () -> Void) {
            self.callbackQueue = callbackQueue
            self.work = work
            super.init()
        }

        override func execute() {
            callbackQueue.asyncAfter(deadline: .now() + .milliseconds(1)) {
                self.work()
                self.finish()
            }
        }
    }

    /// Numbers added from any thread.
    final class Parts: Sendable {
        private let values = Mutex<[Int]>([])

        func add(_ value: Int) {
            values.withLock { $0.append(value) }
        }

        var count: Int { values.withLock { $0.count } }
        var total: Int { values.withLock { $0.reduce(0, +) } }
    }
}
