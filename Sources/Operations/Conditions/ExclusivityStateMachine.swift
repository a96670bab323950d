/// Who holds which mutual-exclusivity category, and who waits for which, as a pure state machine
/// (``Exclusivity`` takes the lock and tells the granted operations).
///
/// **All or none.** A request names every category an operation needs; it is granted only when
/// all of them are available, so a waiting operation holds nothing, and operations that hold
/// categories never wait for more: no set of plain operations can deadlock on categories.
///
/// **Groups.** A category held by a group is available to the group's descendants: a child runs
/// under its group's hold (holds nest, like a stack per category), while its siblings that share
/// the category still exclude each other. A group asks for its own categories together with those
/// of the children it has at that moment, so that those children never wait while it holds.
///
/// **Order.** Requests are granted in the order they were made: a waiting request reserves the
/// categories it needs, and a later request for one of them waits behind it, unless the later one
/// comes from inside a group that holds a category (the group cannot give it back before its
/// children are done, so whoever waits for the group waits for them anyway).
struct ExclusivityStateMachine {
    /// A request for categories.
    struct Request {
        /// The operation asking.
        let operation: ObjectIdentifier
        /// The categories it needs, sorted, without repeats.
        let categories: [String]
        /// The operation's ancestors (groups it is nested in), nearest first.
        let ancestors: Set<ObjectIdentifier>
    }

    /// For each held category, its holders: the outermost first, each nested under the one before.
    private(set) var holders: [String: [ObjectIdentifier]] = [:]
    /// Requests not granted yet, oldest first.
    private(set) var waiting: [Request] = []

    /// Whether `request` can be granted now, given the categories reserved by older requests.
    ///
    /// A request from inside a group that holds a category ignores the reservations: the group
    /// cannot give its categories back before its children are done, so an older request that
    /// waits for the group could never go first, and making the child wait behind it would
    /// deadlock.
    private func isAvailable(_ request: Request, reserved: Set<String>) -> Bool {
        let ignoresReservations = !request.ancestors.isEmpty
            && holders.values.contains { stack in stack.contains { request.ancestors.contains($0) } }
        return request.categories.allSatisfy { category in
            guard let innermost = holders[category]?.last else {
                return ignoresReservations || !reserved.contains(category)
            }
            return request.ancestors.contains(innermost)
        }
    }

    private mutating func grant(_ request: Request) {
        for category in request.categories {
            holders[category, default: []].append(request.operation)
        }
    }

    /// An operation asks for categories. Returns `true` if they are granted at once; otherwise the
    /// request waits, and ``release(_:)`` grants it later.
    mutating func request(_ request: Request) -> Bool {
        let reserved = Set(waiting.flatMap(\.categories))
        if isAvailable(request, reserved: reserved) {
            grant(request)
            return true
        }
        waiting.append(request)
        return false
    }

    /// `operation` finished: it gives back what it holds, or stops waiting. Returns the operations
    /// whose requests are granted now, in the order they asked.
    mutating func release(_ operation: ObjectIdentifier) -> [ObjectIdentifier] {
        if let index = waiting.firstIndex(where: { $0.operation == operation }) {
            waiting.remove(at: index)
        }
        for (category, stack) in holders where stack.contains(operation) {
            let remaining = stack.filter { $0 != operation }
            holders[category] = remaining.isEmpty ? nil : remaining
        }
        return grantWaiting()
    }

    /// Grants, oldest first, every waiting request that can go now.
    private mutating func grantWaiting() -> [ObjectIdentifier] {
        var granted: [ObjectIdentifier] = []
        var reserved: Set<String> = []
        var stillWaiting: [Request] = []
        for request in waiting {
            if isAvailable(request, reserved: reserved) {
                grant(request)
                granted.append(request.operation)
            } else {
                reserved.formUnion(request.categories)
                stillWaiting.append(request)
            }
        }
        waiting = stillWaiting
        return granted
    }

    /// The operations that hold `category` now, outermost first.
    func holders(of category: String) -> [ObjectIdentifier] {
        holders[category] ?? []
    }
}
