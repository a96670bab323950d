import Dispatch

extension OpStateMachine {
    /// What an operation with conditions keeps about passing them, besides its ``Gate``:
    /// allocated on first use, so that the extras of operations without conditions (a name, a
    /// completion block) stay small.
    final class GateState {
        // Only touched with the operation's lock held, like the extras that hold it.
        /// Counts the times the gate closed again (a dependency added to a ready operation, see
        /// ``OpStateMachine/closeGateForNewDependency()``): a verdict, a turn or a grant that was
        /// meant for an earlier pass carries an older number and is ignored. Wraps; compared for
        /// equality only.
        var generation: UInt32 = 0
        /// The task evaluating the `async` conditions, cancelled with the operation.
        var conditionTask: Task<Void, Never>?
        /// Wakes a `start()` called by hand that waits for its conditions or its categories; a
        /// cancellation signals it.
        var waker: DispatchSemaphore?
        /// Whether a `start()` called by hand is passing the gates: the operation counts as
        /// started, and a dependency added meanwhile has no effect.
        var startingManually = false
        /// What closing the gate leaves for the storage to do once the lock is released.
        var closing: GateClosing?
    }

    /// What closing an operation's gate again asks the storage to do after unlocking (see
    /// ``Op/performGateClosing(_:)``).
    struct GateClosing {
        /// The sequence number of the exclusivity request to withdraw (or of the categories to
        /// give back), if the operation asked for any.
        var withdrawsRequest: UInt64?
        /// The task evaluating the conditions, to cancel: its verdict would be ignored.
        var cancelsTask: Task<Void, Never>?
    }

    /// The work started to pass an operation's gates, stopped when it is cancelled.
    struct GateWork {
        /// The task evaluating its `async` conditions.
        var task: Task<Void, Never>?
        /// Wakes a `start()` called by hand that waits.
        var waker: DispatchSemaphore?
        /// The sequence number of its exclusivity request, to withdraw: a cancelled operation
        /// keeps nobody waiting for its categories while it waits to be started and finish.
        var withdrawsRequest: UInt64?
        /// The queue in whose lane of mutual exclusivity the operation may be parked (see
        /// ``OpQueueStateMachine/Lane``): a cancelled one goes on at once, to finish.
        var unparksIn: OpQueue?

        /// Stops it: cancels the task, withdraws the request, lets it out of its lane, wakes the
        /// waiting start.
        func stop(for operation: Op) {
            task?.cancel()
            if let withdrawsRequest {
                Exclusivity.release(operation, sequence: withdrawsRequest)
            }
            unparksIn?.unparkCancelled(operation)
            waker?.signal()
        }
    }

    /// What an operation that its queue starts asks of the exclusivity table (see
    /// ``OpStateMachine/takesCategoriesAtStart()``).
    struct CategoryRequest: Equatable {
        /// The gate's generation the request is made for.
        var generation: UInt32
        /// Its place in the order of requests.
        var sequence: UInt64
        /// Which of the operation's requests it is (see ``Extras/exclusivityAttempt``).
        var attempt: UInt32 = 0
        /// Its own categories (a group adds its children's).
        var categories: [String]
        /// Its counted categories, taken once its exclusive ones are held (see ``LimitStateMachine``).
        var limits: [OpLimit] = []
        /// Its queue.
        var queue: OpQueue?
        /// The group it is a child of, if any.
        var group: GroupOp?

        static func == (lhs: CategoryRequest, rhs: CategoryRequest) -> Bool {
            lhs.generation == rhs.generation && lhs.sequence == rhs.sequence && lhs.attempt == rhs.attempt
                && lhs.categories == rhs.categories && lhs.limits.map(\.category) == rhs.limits.map(\.category)
                && lhs.queue === rhs.queue && lhs.group === rhs.group
        }
    }
}
