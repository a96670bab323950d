import Dispatch
import Foundation
import Operations

/// Quality of service: how soon work of a higher class starts while the cores are busy with a
/// backlog of `.background` work.
extension Workloads {
    // MARK: 18. A user-initiated operation behind a background backlog

    /// Keeps the CPU busy for `microseconds` (a background operation's work).
    static func spin(microseconds: UInt64) {
        let end = DispatchTime.now().uptimeNanoseconds + microseconds * 1_000
        while DispatchTime.now().uptimeNanoseconds < end {}
    }

    /// Nanoseconds from adding a `.userInitiated` operation to its start, while `backlog`
    /// `.background` operations of 1 ms of CPU each keep the cores busy and wait.
    public static func oursQualityOfServiceLatency(backlog: Int = 1_000) -> UInt64 {
        let background = OpQueue()
        background.qualityOfService = .background
        let urgent = OpQueue()
        urgent.qualityOfService = .userInitiated
        return latencyBehindBacklog(
            addBacklog: {
                background.addOperations((0..<backlog).map { _ in
                    let operation = BlockOp { spin(microseconds: 1_000) }
                    operation.qualityOfService = .background
                    return operation
                }, waitUntilFinished: false)
            },
            addUrgent: { urgent.addOperation($0) },
            endBacklog: {
                background.cancelAllOperations()
                background.waitUntilAllOperationsAreFinished()
            })
    }

    /// The same with Foundation's `OperationQueue`.
    public static func foundationQualityOfServiceLatency(backlog: Int = 1_000) -> UInt64 {
        let background = OperationQueue()
        background.qualityOfService = .background
        let urgent = OperationQueue()
        urgent.qualityOfService = .userInitiated
        return latencyBehindBacklog(
            addBacklog: {
                background.addOperations((0..<backlog).map { _ in
                    let operation = BlockOperation { spin(microseconds: 1_000) }
                    operation.qualityOfService = .background
                    return operation
                }, waitUntilFinished: false)
            },
            addUrgent: { urgent.addOperation($0) },
            endBacklog: {
                background.cancelAllOperations()
                background.waitUntilAllOperationsAreFinished()
            })
    }

    /// Adds the backlog, lets it occupy the cores for 20 ms, then measures from adding the urgent
    /// work to its start, and ends the backlog.
    private static func latencyBehindBacklog(
        addBacklog: () -> Void,
        addUrgent: (@escaping @Sendable () -> Void) -> Void,
        endBacklog: () -> Void
    ) -> UInt64 {
        addBacklog()
        usleep(20_000)   // the cores are busy, the backlog waits
        let started = StartBox()
        let added = DispatchTime.now().uptimeNanoseconds
        addUrgent { started.set(DispatchTime.now().uptimeNanoseconds) }
        let latency = started.wait() - added
        endBacklog()
        return latency
    }

    /// The same with Dispatch's global queues of those classes.
    public static func dispatchQualityOfServiceLatency(backlog: Int = 1_000) -> UInt64 {
        let group = DispatchGroup()
        let cancelled = LockedFlag()
        return latencyBehindBacklog(
            addBacklog: {
                for _ in 0..<backlog {
                    DispatchQueue.global(qos: .background).async(group: group) {
                        if !cancelled.isSet { spin(microseconds: 1_000) }
                    }
                }
            },
            addUrgent: { DispatchQueue.global(qos: .userInitiated).async(execute: $0) },
            endBacklog: {
                cancelled.set()
                group.wait()
            })
    }
}

/// A flag set once, read from many threads.
final class LockedFlag: @unchecked Sendable {
    // @unchecked Sendable: `value` is only touched under `lock`.
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}
