import Testing
import Dispatch
@testable import Operations

/// Records the names of the callbacks it hears, in order.
private final class CallbackLog: OpObserver, Sendable {
    let events = EventLog<String>()

    func didAttach(to operation: Op) { events.append("didAttach") }
    func willExecute(_ operation: Op) { events.append("willExecute") }
    func didCancel(_ operation: Op, error: (any Error)?) { events.append("didCancel") }
    func willFinish(_ operation: Op, error: (any Error)?) { events.append("willFinish") }
    func didFinish(_ operation: Op, error: (any Error)?) { events.append("didFinish") }
}

/// The race the composition stress test found as K7 (see ``CompositionKnownIssue``), made likely:
/// a `DelayOp` cancelled by another thread as soon as its queue makes it executing. Before the
/// fix it showed in more than half of the rounds.
@Suite struct DelayOpStartRaceTests {
    /// Its observers hear willExecute before willFinish, as for any operation that executes.
    ///
    /// The bug: the queue marks the delay executing, then posts willExecute and calls `main()`;
    /// a `cancel()` in between called `DelayOp.didCancelWhileExecuting()`, which ended the delay
    /// (`end()` → `finish()`, posting willFinish) before `execute()` ran, so willExecute was
    /// delivered after willFinish.
    @Test func delayCancelledAsItStartsTellsWillExecuteBeforeWillFinish() async {
        let reordered: [String]? = await onOwnThread {
            let queue = OpQueue()
            queue.maxConcurrentOperationCount = 1
            for _ in 0..<500 {
                let delay = DelayOp(for: .seconds(10))
                let log = CallbackLog()
                delay.addObserver(log)
                let cancelled = Gate()
                DispatchQueue.global().async {
                    while !delay.isExecuting && !delay.isFinished {}
                    delay.cancel()
                    cancelled.open()
                }
                queue.addOperation(delay)
                cancelled.wait()
                queue.waitUntilAllOperationsAreFinished()
                _ = eventually(seconds: 5) { log.events.all.contains("didFinish") }
                let events = log.events.all
                if let execute = events.firstIndex(of: "willExecute"), let finish = events.firstIndex(of: "willFinish"), execute > finish {
                    return events
                }
            }
            return nil
        }
        #expect(reordered == nil, "observers of a DelayOp cancelled as it started heard \(reordered ?? [])")
    }
}
