import Operations

/// Limits across queues (issue 24): a counted category shared by several queues against the same
/// operations through one queue of the same width.
extension Workloads {
    // MARK: 19. Limits

    /// `count` empty operations with `OpCondition.limited("x", permits: 4)`, spread over 4 queues
    /// of default width (so that the limit, not the queues, bounds them). `width` sets the queues'
    /// width; `condition`, if given, replaces the limit (`.some(nil)`: no condition at all).
    public static func oursLimitedAcrossQueues(_ count: Int, permits: Int = 4, queues queueCount: Int = 4,
                                               width: Int? = nil, condition: OpCondition?? = .none) {
        let limit: OpCondition? = condition ?? .limited("benchmark-limit", permits: permits)
        let queues = (0..<queueCount).map { _ in
            let queue = OpQueue()
            if let width { queue.maxConcurrentOperationCount = width }
            return queue
        }
        var batches: [[Op]] = Array(repeating: [], count: queueCount)
        for index in 0..<count {
            let operation = BlockOp {}
            if let limit { operation.addCondition(limit) }
            batches[index % queueCount].append(operation)
        }
        for (queue, batch) in zip(queues, batches) {
            queue.addOperations(batch, waitUntilFinished: false)
        }
        for queue in queues { queue.waitUntilAllOperationsAreFinished() }
    }

    /// The same empty operations as ``oursLimitedAcrossQueues(_:permits:queues:)``, without the
    /// condition, through one queue of width `width`.
    public static func oursWidthLimited(_ count: Int, width: Int = 4) {
        let queue = OpQueue()
        queue.maxConcurrentOperationCount = width
        var all: [Op] = []
        all.reserveCapacity(count)
        for _ in 0..<count { all.append(BlockOp {}) }
        queue.addOperations(all, waitUntilFinished: false)
        queue.waitUntilAllOperationsAreFinished()
    }
}
