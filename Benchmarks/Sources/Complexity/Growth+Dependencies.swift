import Operations

/// One operation's dependents and dependencies, and chains of dependencies (the cycle search).
extension Growth {
    /// One operation with `n` dependents, all in one queue, which run once it has finished.
    /// Grows the operation's list of dependents, which its finish walks.
    static func dependents(_ n: Int) -> Sample {
        let clock = Stopwatch()
        do {
            let done = Countdown(n)
            let root = BlockOp {}
            let dependents = ticking(n, done)
            for dependent in dependents { dependent.addDependency(root) }
            let queue = OpQueue()
            queue.addOperations(dependents, waitUntilFinished: false)
            queue.addOperation(root)
            done.wait()
        }
        return clock.sample
    }

    /// One operation that depends on `n` others, built and run. Grows its list of dependencies
    /// and its count of unfinished ones.
    static func dependencies(_ n: Int) -> Sample {
        let clock = Stopwatch()
        do {
            let done = Countdown(1)
            let sink = BlockOp { done.tick() }
            let dependencies = (0..<n).map { _ in BlockOp {} }
            for dependency in dependencies { sink.addDependency(dependency) }
            let queue = OpQueue()
            queue.addOperations(dependencies, waitUntilFinished: false)
            queue.addOperation(sink)
            done.wait()
        }
        return clock.sample
    }

    /// One operation with `n` dependents, each of which removes its dependency on it and adds
    /// it back (from the middle outwards); then they run. Timed: the removals and re-additions,
    /// which search the operation's list of dependents.
    static func dependentsReAdded(_ n: Int) -> Sample {
        let done = Countdown(n)
        let root = BlockOp {}
        let dependents = ticking(n, done)
        for dependent in dependents { dependent.addDependency(root) }
        let order = fromTheMiddle(dependents)
        let clock = Stopwatch()
        for dependent in order {
            dependent.removeDependency(root)
            dependent.addDependency(root)
        }
        let sample = clock.sample
        // Then they run: the list must still be right (each dependent runs once).
        let queue = OpQueue()
        queue.addOperations(dependents, waitUntilFinished: false)
        queue.addOperation(root)
        done.wait()
        return sample
    }

    /// One operation that depends on `n` others removes each of them (from the middle outwards),
    /// then runs. Timed: the removals, which search its list of dependencies.
    static func dependenciesRemoved(_ n: Int) -> Sample {
        let done = Countdown(1)
        let sink = BlockOp { done.tick() }
        let dependencies = (0..<n).map { _ in BlockOp {} }
        for dependency in dependencies { sink.addDependency(dependency) }
        let order = fromTheMiddle(dependencies)
        let clock = Stopwatch()
        for dependency in order { sink.removeDependency(dependency) }
        let sample = clock.sample
        OpQueue().addOperation(sink)
        done.wait()
        return sample
    }

    /// A chain of `n` operations made in the order they run (each depends on the one made before
    /// it), built and run: the cycle search has nothing to do.
    static func chainForwards(_ n: Int) -> Sample {
        let clock = Stopwatch()
        do {
            let done = Countdown(1)
            var operations: [Op] = []
            operations.reserveCapacity(n)
            for index in 0..<n {
                let operation = index == n - 1 ? BlockOp { done.tick() } : BlockOp {}
                if let previous = operations.last { operation.addDependency(previous) }
                operations.append(operation)
            }
            let queue = OpQueue()
            queue.addOperations(operations, waitUntilFinished: false)
            done.wait()
        }
        return clock.sample
    }

    /// The same chain made the other way: the operation that runs last is made first, and the
    /// links are added from the end that runs first, so each new dependency is on a newer
    /// operation that already waits for the rest of the chain. Every new edge is one the cycle
    /// search must look at.
    static func chainBackwards(_ n: Int) -> Sample {
        let clock = Stopwatch()
        do {
            let done = Countdown(1)
            // operations[0] runs last, operations[n - 1] first.
            let operations: [Op] = (0..<n).map { index in index == 0 ? BlockOp { done.tick() } : BlockOp {} }
            for index in stride(from: n - 2, through: 0, by: -1) {
                operations[index].addDependency(operations[index + 1])
            }
            let queue = OpQueue()
            queue.addOperations(operations, waitUntilFinished: false)
            done.wait()
        }
        return clock.sample
    }
}
