extension OpStateMachine {
    /// Where an operation belongs: in no queue and no group, in a queue, or in a group.
    ///
    /// "Member of a queue" and "child of a group" exclude each other: an operation joins one of
    /// them, once, while it is free and pending, and every way in (``OpQueue/addOperation(_:)``
    /// and the other additions, ``GroupOp/addChild(_:)``, a group's initializer, the dependencies
    /// that conditions contribute, `RetryOp` attempts, ``Op/produce(_:)``) goes through
    /// ``OpStateMachine/enqueue(in:)`` or ``OpStateMachine/join(_:)``, which refuse an operation
    /// that belongs somewhere already. A group's child runs in the group's own queue of children
    /// (``GroupOp/Link/queue``), which only the group adds it to.
    ///
    /// Eight bytes: the case is kept in the spare bits of the reference.
    enum Membership {
        /// In no queue and no group (a queue member that completed is free again).
        case free
        /// A member of the queue, added with one of its `addOperation` methods; until it completes.
        case queue(OpQueue)
        /// A child of the group that the link leads to, not in the group's queue of children: the
        /// group has not started (or the child was started by hand), or the child completed.
        case child(GroupOp.Link)
        /// A child of the group that the link leads to, in the group's queue of children
        /// (``GroupOp/Link/queue``); until it completes.
        case childInQueue(GroupOp.Link)

        /// The queue the operation is in: its queue, or its group's queue of children.
        var queue: OpQueue? {
            switch self {
            case .queue(let queue): queue
            case .childInQueue(let link): link.queue
            case .free, .child: nil
            }
        }

        /// The link to the operation's group, if it is a child.
        var groupLink: GroupOp.Link? {
            switch self {
            case .child(let link), .childInQueue(let link): link
            case .free, .queue: nil
            }
        }

        /// Whether the operation is in no queue and no group.
        var isFree: Bool {
            if case .free = self { return true }
            return false
        }
    }

    /// The queue the operation is in (its group's queue of children, for a child the group runs);
    /// kept until it completes.
    var queue: OpQueue? { membership.queue }

    /// Whether the operation is a group's child (its group learns of a failure as it finishes).
    var isGroupChild: Bool { membership.groupLink != nil }

    /// The group the operation is a child of, if any.
    var group: GroupOp? { membership.groupLink?.group }

    /// Why ``join(_:)`` refused to make an operation a group's child.
    enum JoinRefusal {
        /// It is in a queue.
        case inQueue(OpQueue)
        /// It is a child of a group already (perhaps of the same group); `nil` if that group is gone.
        case child(of: GroupOp?)
        /// It has started (by hand) or finished.
        case started
    }

    /// Makes the operation a child of `group`, waiting for the group to add it to its queue of
    /// children. Refused unless the operation is free and pending.
    mutating func join(_ group: GroupOp) -> JoinRefusal? {
        switch membership {
        case .free:
            guard lifecycle == .pending else { return .started }
            membership = .child(group.link)
            return nil
        case .queue(let queue):
            return .inQueue(queue)
        case .child(let link), .childInQueue(let link):
            return .child(of: link.group)
        }
    }
}
