import Dispatch
@testable import Operations

/// An asynchronous operation that logs its index when it starts and finishes from
/// `DispatchQueue.global()`, holding its queue's slot until then.
final class LoggingAsyncOp: AsyncOp, @unchecked Sendable {
    // @unchecked Sendable: its own stored properties are immutable `let`s of Sendable types.
    let index: Int
    let log: EventLog<Int>

    init(index: Int, log: EventLog<Int>) {
        self.index = index
        self.log = log
        super.init()
    }

    override func execute() {
        log.append(index)
        DispatchQueue.global().async { self.finish() }
    }
}
