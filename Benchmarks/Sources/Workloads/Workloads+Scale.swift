import Dispatch
import Foundation
import Operations

/// How the cost per operation grows with the number of operations and of threads adding them.
extension Workloads {
    // MARK: 19. Scale

    /// `count` empty operations added one by one to one default queue by `submitters` threads
    /// of their own at once (each adds its share), then waited for.
    public static func oursScale(_ count: Int, submitters: Int) {
        let queue = OpQueue()
        let share = count / submitters
        let added = DispatchGroup()
        for _ in 0..<submitters {
            added.enter()
            Thread.detachNewThread {
                for _ in 0..<share { queue.addOperation {} }
                added.leave()
            }
        }
        added.wait()
        queue.waitUntilAllOperationsAreFinished()
    }
}
