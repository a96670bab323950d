import Dispatch
import Foundation
import Operations

/// The workloads, each written once for our library and once for each peer.
enum Workloads {
    // MARK: 1. Independent empty operations on a default queue

    static func oursIndependent(_ count: Int) {
        let queue = OpQueue()
        for _ in 0..<count { queue.addOperation {} }
        queue.waitUntilAllOperationsAreFinished()
    }

    static func foundationIndependent(_ count: Int) {
        let queue = OperationQueue()
        for _ in 0..<count { queue.addOperation {} }
        queue.waitUntilAllOperationsAreFinished()
    }

    static func dispatchIndependent(_ count: Int) {
        let group = DispatchGroup()
        let queue = DispatchQueue.global()
        for _ in 0..<count { queue.async(group: group) {} }
        group.wait()
    }

    static func taskGroupIndependent(_ count: Int) async {
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<count { group.addTask {} }
        }
    }

    // MARK: 2. Width-1 queue

    static func oursSerial(_ count: Int) {
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = 1
        for _ in 0..<count { queue.addOperation {} }
        queue.waitUntilAllOperationsAreFinished()
    }

    static func foundationSerial(_ count: Int) {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        for _ in 0..<count { queue.addOperation {} }
        queue.waitUntilAllOperationsAreFinished()
    }

    static func dispatchSerial(_ count: Int) {
        let queue = DispatchQueue(label: "serial")
        let group = DispatchGroup()
        for _ in 0..<count { queue.async(group: group) {} }
        group.wait()
    }

    // MARK: 3. Dependency chain

    static func oursChain(_ count: Int) {
        var ops: [Op] = []
        ops.reserveCapacity(count)
        for index in 0..<count {
            let op = BlockOp {}
            if index > 0 { op.addDependency(ops[index - 1]) }
            ops.append(op)
        }
        let queue = OpQueue()
        queue.addOperations(ops, waitUntilFinished: false)
        queue.waitUntilAllOperationsAreFinished()
    }

    static func foundationChain(_ count: Int) {
        var ops: [Operation] = []
        ops.reserveCapacity(count)
        for index in 0..<count {
            let op = BlockOperation {}
            if index > 0 { op.addDependency(ops[index - 1]) }
            ops.append(op)
        }
        let queue = OperationQueue()
        queue.addOperations(ops, waitUntilFinished: false)
        queue.waitUntilAllOperationsAreFinished()
    }
}
