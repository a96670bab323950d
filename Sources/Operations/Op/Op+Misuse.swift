extension Op {
    /// Traps with a message that names the operation and says what to do instead.
    func trap(_ misuse: OpStateMachine.Misuse) -> Never {
        switch misuse {
        case .startWhileEnqueued:
            Operations.misuse("start() was called on \(self), which is in an OpQueue; the queue starts it. Remove the start() call, or do not add the operation to a queue.")
        case .startWhileExecuting:
            Operations.misuse("start() was called on \(self) while it is executing. An operation runs once; create a new operation to run the work again.")
        case .startWhileNotReady:
            Operations.misuse("start() was called on \(self), which is not ready: a dependency has not finished. Check isReady before calling start(), or add the operation to an OpQueue, which starts it when it becomes ready.")
        case .enqueueWhileEnqueued:
            Operations.misuse("\(self) was added to an OpQueue, but it is already in a queue (perhaps the same one, or twice in one addOperations call). An operation is added once, to one queue; to run the work again or elsewhere, create a new operation.")
        case .enqueueGroupChild:
            Operations.misuse("\(self) was added to an OpQueue, but it is a child of \(group.map { "\($0)" } ?? "a group"), which runs it in its own queue of children. An operation is either in a queue or a child of a group: add the group to the queue, or add a new operation.")
        case .enqueueWhileExecuting:
            Operations.misuse("\(self) was added to an OpQueue while it is executing. Operations that are executing, finished or already in a queue cannot be added to a queue; create a new operation.")
        case .enqueueWhenFinished:
            Operations.misuse("\(self) was added to an OpQueue after it finished. An operation runs once; create a new operation to run the work again.")
        case .finishWhenNotExecuting:
            Operations.misuse("finish() was called on \(self) before it started executing. Call finish() only once execute() has been called.")
        case .finishWithoutExecuting:
            Operations.misuse("finish() was called on \(self), which was cancelled before it started: execute() never ran and the operation finished on its own. Call finish() only from the work that execute() starts.")
        case .finishTwice:
            Operations.misuse("finish() was called twice on \(self). Call finish() exactly once, when the work is done.")
        }
    }
}
