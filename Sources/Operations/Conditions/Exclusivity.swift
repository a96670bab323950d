/// The process-wide table of mutual-exclusivity categories (see ``OpCondition/mutuallyExclusive(_:)``
/// and ``ExclusivityStateMachine``): takes its lock, runs the machine, and tells the operations
/// whose requests were granted after unlocking.
enum Exclusivity {
    /// The table and the operations it names (kept alive while they hold or wait).
    private struct Table {
        var machine = ExclusivityStateMachine()
        var operations: [ObjectIdentifier: (operation: Op, granted: @Sendable () -> Void)] = [:]
    }

    private static let table = LockedBox(Table())

    /// Asks for `operation`'s `categories`; `granted` is called once they are granted (at once, on
    /// this thread, if they are available). An operation that already finished asks for nothing.
    static func request(_ operation: Op, categories: [String], granted: @escaping @Sendable () -> Void) {
        let request = ExclusivityStateMachine.Request(
            operation: ObjectIdentifier(operation), categories: categories,
            ancestors: Set(operation.ancestors.map(ObjectIdentifier.init)))
        let grantedNow: Bool? = table.withLockedValue { table in
            // Checked under the table's lock: an operation that finishes after this check gives
            // back (with `release`, which takes this lock) what this call takes.
            guard !operation.isFinished else { return nil }
            table.operations[request.operation] = (operation, granted)
            return table.machine.request(request)
        }
        if grantedNow == true { granted() }
    }

    /// `operation` finished: gives back its categories (or withdraws its request) and tells the
    /// operations granted now.
    static func release(_ operation: Op) {
        let granted: [@Sendable () -> Void] = table.withLockedValue { table in
            let released = table.operations.removeValue(forKey: ObjectIdentifier(operation))
            guard released != nil else { return [] }
            return table.machine.release(ObjectIdentifier(operation)).compactMap { table.operations[$0]?.granted }
        }
        for grant in granted { grant() }
    }

    /// What keeps `operation` waiting for its categories (for ``OpQueue/dump()``): `nil` if it
    /// does not wait. The operations are returned, and released by the caller outside the lock.
    static func blockers(of operation: Op) -> [Blocker]? {
        table.withLockedValue { table in
            table.machine.blockers(of: ObjectIdentifier(operation))?.map { blocker in
                Blocker(category: blocker.category,
                        holders: blocker.holders.compactMap { table.operations[$0]?.operation },
                        earlierRequests: blocker.earlierRequests.compactMap { table.operations[$0]?.operation })
            }
        }
    }

    /// The operations that hold `category` now, outermost first (for diagnostics and tests).
    static func holders(of category: String) -> [Op] {
        table.withLockedValue { table in
            table.machine.holders(of: category).compactMap { table.operations[$0]?.operation }
        }
    }
}
