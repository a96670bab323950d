import Dispatch
import Operations

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
    /// The example: `swift run examples gcd-group`.
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
        let gcdParts = Recorder<Int>()
        for part in 1...3 {
            work.async(group: group) { gcdParts.append(part) }
        }
        let callbacks = DispatchQueue(label: "gcd-group.callbacks")
        group.enter()
        callbacks.asyncAfter(deadline: .now() + .milliseconds(1)) {
            gcdParts.append(4)
            group.leave()
        }
        // `notify` runs a block once the group is empty (here on a serial queue, where apps use
        // the main queue); the semaphore only lets this synchronous example print what it saw.
        let notified = Recorder<Int>()
        let notifyRan = DispatchSemaphore(value: 0)
        group.notify(queue: callbacks) {
            notified.append(total(gcdParts))
            notifyRan.signal()
        }
        group.wait()
        output.line("GCD group.wait() returned: \(gcdParts.all.count) parts done")
        notifyRan.wait()
        output.line("GCD group.notify: total \(total(notified))")

        // Operations: the parts, a callback-style part as an `AsyncOp`, and a final operation
        // that depends on each of them (the counterpart of `notify`); the queue is waited for
        // with `waitUntilAllOperationsAreFinished()` (the counterpart of `wait`).
        let queue = OpQueue()
        queue.name = "gcd-group"
        let opParts = Recorder<Int>()
        let finalTotal = Recorder<Int>()
        let parts = makeParts(adding: opParts, callbackQueue: callbacks)
        let final = BlockOp { finalTotal.append(total(opParts)) }
        for part in parts {
            final.addDependency(part)
        }
        queue.addOperations(parts + [final], waitUntilFinished: false)
        queue.waitUntilAllOperationsAreFinished()
        output.line("OpQueue: the final operation ran after \(final.dependencies.count) parts: total \(total(finalTotal))")
        output.line("OpQueue waitUntilAllOperationsAreFinished() returned: \(queue.operationCount) operations left")

        // A part cancelled before it started finishes without running; the final operation
        // still runs, and can tell from its dependencies. (The queue is suspended so that part 2
        // cannot have started before it is cancelled.)
        let someParts = Recorder<Int>()
        let someTotal = Recorder<Int>()
        let cancelledSeen = Recorder<Int>()
        let fewerParts = makeParts(adding: someParts, callbackQueue: callbacks)
        let check = BlockOp()
        check.addExecutionBlock { [unowned check] in
            cancelledSeen.append(check.dependencies.filter(\.isCancelled).count)
            someTotal.append(total(someParts))
        }
        for part in fewerParts {
            check.addDependency(part)
        }
        queue.isSuspended = true
        queue.addOperations(fewerParts + [check], waitUntilFinished: false)
        fewerParts[1].cancel()
        queue.isSuspended = false
        queue.waitUntilAllOperationsAreFinished()
        output.line("OpQueue: part 2 was cancelled; the final operation still ran and saw \(total(cancelledSeen)) cancelled dependency: total \(total(someTotal))")
    }

    /// Parts 1 to 3 as block operations, and part 4 as a ``CallbackOp`` that finishes in a
    /// callback on `callbackQueue` (the counterpart of `enter()` and `leave()`).
    private static func makeParts(adding parts: Recorder<Int>, callbackQueue: DispatchQueue) -> [Op] {
        let blocks: [Op] = (1...3).map { part in BlockOp { parts.append(part) } }
        // `execute()` starts the work and its callback calls `finish`, where GCD's job calls
        // `leave()`.
        let callback = CallbackOp { finish in
            callbackQueue.asyncAfter(deadline: .now() + .milliseconds(1)) {
                parts.append(4)
                finish()
            }
        }
        return blocks + [callback]
    }

    /// The sum of the numbers in `parts`.
    private static func total(_ parts: Recorder<Int>) -> Int {
        parts.all.reduce(0, +)
    }
}
