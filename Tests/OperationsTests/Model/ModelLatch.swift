import Foundation

/// A one-way signal that any number of threads can wait for, with a timeout.
final class ModelLatch: @unchecked Sendable {
    // @unchecked Sendable: `isOpen` is guarded by `condition`.
    private let condition = NSCondition()
    private var isOpen = false

    func open() {
        condition.lock()
        isOpen = true
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until it is open; `false` if it was not within `seconds`.
    func wait(seconds: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        condition.lock()
        defer { condition.unlock() }
        while !isOpen {
            if !condition.wait(until: deadline) { return isOpen }
        }
        return true
    }
}
