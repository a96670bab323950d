import Operations

/// The cost of composing: groups and conditions against the same work without them.
extension Workloads {
    // MARK: 10. Groups

    /// `groups` groups of `children` empty children each, in one queue.
    public static func oursGroups(_ groups: Int, children: Int) {
        let queue = OpQueue()
        var all: [Op] = []
        all.reserveCapacity(groups)
        for _ in 0..<groups {
            all.append(GroupOp(operations: (0..<children).map { _ in BlockOp {} }))
        }
        queue.addOperations(all, waitUntilFinished: false)
        queue.waitUntilAllOperationsAreFinished()
    }

    /// The same empty operations as ``oursGroups(_:children:)``, without groups, in one queue.
    public static func oursUngrouped(_ groups: Int, children: Int) {
        let queue = OpQueue()
        var all: [Op] = []
        all.reserveCapacity(groups * children)
        for _ in 0..<(groups * children) { all.append(BlockOp {}) }
        queue.addOperations(all, waitUntilFinished: false)
        queue.waitUntilAllOperationsAreFinished()
    }

    // MARK: 11. Conditions

    /// `count` empty operations with one passing condition each.
    public static func oursConditioned(_ count: Int) {
        let queue = OpQueue()
        let condition = OpCondition.predicate("always") { _ in true }
        var all: [Op] = []
        all.reserveCapacity(count)
        for _ in 0..<count {
            let operation = BlockOp {}
            operation.addCondition(condition)
            all.append(operation)
        }
        queue.addOperations(all, waitUntilFinished: false)
        queue.waitUntilAllOperationsAreFinished()
    }

    /// The same empty operations as ``oursConditioned(_:)``, without conditions.
    public static func oursUnconditioned(_ count: Int) {
        let queue = OpQueue()
        var all: [Op] = []
        all.reserveCapacity(count)
        for _ in 0..<count { all.append(BlockOp {}) }
        queue.addOperations(all, waitUntilFinished: false)
        queue.waitUntilAllOperationsAreFinished()
    }
}
