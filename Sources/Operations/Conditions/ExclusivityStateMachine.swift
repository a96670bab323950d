import Synchronization

/// Who holds which mutual-exclusivity category, and who waits for which, as a pure state machine
/// (``Exclusivity`` takes the lock and tells the operations whose turn came).
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
/// **Order.** Requests are served in the order of their sequence numbers (the order in which the
/// operations passed their conditions): a waiting request reserves the categories it needs, and a
/// later request for one of them waits behind it, unless the later one comes from inside a group
/// that holds a category (the group cannot give it back before its children are done, so whoever
/// waits for the group waits for them anyway).
///
/// **Turns.** A waiting request whose categories all became available has its *turn*. One that
/// ``Request/grantsAtTurn`` (an operation started by hand, whose thread waits) is granted then;
/// any other is *offered* the categories: they stay reserved for it, and it takes them by asking
/// again (``request(_:)``) when its queue starts it.
///
/// **Cost.** Each category keeps its waiting requests in a line sorted by sequence number, and
/// each waiting request counts the categories that still keep it waiting (held by someone else,
/// or reserved by an older request): a request, a grant and a release cost O(categories of the
/// request) amortised, whatever the number of waiting requests. Requests from inside a holding
/// group wait outside the lines, in a short list per category.
struct ExclusivityStateMachine {
    /// A request for categories.
    struct Request {
        /// The operation asking.
        let operation: ObjectIdentifier
        /// The categories it needs, sorted, without repeats.
        let categories: [String]
        /// The operation's ancestors (groups it is nested in).
        let ancestors: Set<ObjectIdentifier>
        /// Its place in the order of requests: older requests have smaller numbers (see
        /// ``ExclusivityStateMachine/nextSequence()``).
        let sequence: UInt64
        /// Whether the request is granted as soon as its turn comes, rather than offered.
        let grantsAtTurn: Bool

        init(operation: ObjectIdentifier, categories: [String], ancestors: Set<ObjectIdentifier>,
             sequence: UInt64 = ExclusivityStateMachine.nextSequence(), grantsAtTurn: Bool = true) {
            self.operation = operation
            self.categories = categories
            self.ancestors = ancestors
            self.sequence = sequence
            self.grantsAtTurn = grantsAtTurn
        }
    }

    /// Relaxed: sequence numbers need only be unique and ordered like the increments, which a
    /// single atomic counter is.
    private static let sequenceCounter = Atomic<UInt64>(0)

    /// A new sequence number, greater than every one handed out before.
    static func nextSequence() -> UInt64 {
        sequenceCounter.add(1, ordering: .relaxed).newValue
    }

    /// A waiting request and what keeps it waiting.
    private struct Waiter {
        var request: Request
        /// Tells this request's line entries from those of an earlier request of the operation.
        let token: UInt64
        /// Whether it comes from inside a group that holds a category: it ignores reservations,
        /// and waits in the categories' `bypassers` instead of their lines.
        let bypasses: Bool
        /// How many of its categories keep it waiting; its turn comes at zero.
        var blocked: Int
        /// Whether its turn came and it was told so (and has not asked again since).
        var offered = false
    }

    /// An entry of a category's line.
    private struct LineEntry {
        let operation: ObjectIdentifier
        let sequence: UInt64
        let token: UInt64
    }

    /// One category in use: held, or waited for.
    private final class Category {
        /// The holders: the outermost first, each nested under the one before.
        var holders: [ObjectIdentifier] = []
        /// The waiting requests that do not bypass reservations, sorted by sequence number. The
        /// entries before `start` are gone; the entry at `start` (the front) is always live; later
        /// entries may be dead (withdrawn requests), counted in `dead`.
        var line: [LineEntry] = []
        var start = 0
        var dead = 0
        /// The waiting requests that bypass reservations (see ``Waiter/bypasses``).
        var bypassers: [ObjectIdentifier] = []

        var front: LineEntry? { start < line.count ? line[start] : nil }
        var isUnused: Bool { holders.isEmpty && start == line.count && bypassers.isEmpty }
    }

    private var categories: [String: Category] = [:]
    private var waiters: [ObjectIdentifier: Waiter] = [:]
    /// What each holder holds, and the sequence number of the request that got it.
    private var holdings: [ObjectIdentifier: (categories: [String], sequence: UInt64)] = [:]
    private var nextToken: UInt64 = 0
    /// Waiters whose count of blocking categories dropped to zero during the current event.
    private var turned: [ObjectIdentifier] = []
    /// Counts the entries and waiters the machine visits: a measure of its work that does not
    /// depend on the machine it runs on (see `ExclusivityComplexityTests`). Wraps.
    private(set) var work: UInt64 = 0

    // MARK: Events

    /// An operation asks for categories, or asks again when its turn was offered. Returns `true`
    /// if they are granted now; otherwise the request waits, and its turn comes with a later
    /// event (``release(_:)``). An operation whose earlier request still waits with another
    /// sequence number withdraws it first.
    mutating func request(_ request: Request) -> Bool {
        if let waiter = waiters[request.operation] {
            if waiter.request.sequence == request.sequence {
                if waiter.blocked == 0 {
                    grant(request.operation)
                    return true
                }
                waiters[request.operation]!.offered = false
                return false
            }
            withdraw(request.operation)
        }
        if let held = holdings[request.operation] {
            #if OPERATIONS_INTERNAL_CHECKS
            preconditionFailure("Internal inconsistency: an operation asks for \(request.categories) while it holds \(held.categories)")
            #else
            // Never waits for itself: what it held is given back first.
            _ = held
            giveBack(request.operation)
            #endif
        }
        let bypasses = !request.ancestors.isEmpty && request.ancestors.contains { holdings[$0] != nil }
        var available = true
        for name in request.categories {
            guard let category = categories[name] else { continue }
            if isHeld(category, against: request) {
                available = false
                break
            }
            if !bypasses, let front = category.front, front.sequence < request.sequence {
                available = false
                break
            }
        }
        if available {
            hold(request.operation, request.categories, sequence: request.sequence)
        } else {
            enqueue(request, bypasses: bypasses)
        }
        return available
    }

    /// `operation` finished, or no longer asks: it gives back what it holds, or withdraws its
    /// waiting request. Returns the operations whose turn came, in the order they asked (those
    /// that ``Request/grantsAtTurn`` hold their categories now).
    mutating func release(_ operation: ObjectIdentifier) -> [ObjectIdentifier] {
        if holdings[operation] != nil {
            giveBack(operation)
        } else if waiters[operation] != nil {
            withdraw(operation)
        }
        return settleTurns()
    }

    /// Whether `operation` waits with a request of sequence number `sequence`, or holds what such
    /// a request got (to give back only what a given request took).
    func knows(_ operation: ObjectIdentifier, sequence: UInt64) -> Bool {
        waiters[operation]?.request.sequence == sequence || holdings[operation]?.sequence == sequence
    }

    // MARK: Granting

    /// Grants a waiting request whose turn came.
    private mutating func grant(_ operation: ObjectIdentifier) {
        let waiter = waiters.removeValue(forKey: operation)!
        for name in waiter.request.categories {
            let category = categories[name]!
            if waiter.bypasses {
                category.bypassers.removeAll { $0 == operation }
            } else {
                // Its front entry is dead now; it is dropped below, once the new holder is in.
                category.dead += 1
            }
        }
        hold(operation, waiter.request.categories, sequence: waiter.request.sequence)
    }

    /// Makes `operation` a holder of `names`.
    private mutating func hold(_ operation: ObjectIdentifier, _ names: [String], sequence: UInt64) {
        for name in names {
            let category = category(named: name)
            changeHolders(of: category) { $0.holders.append(operation) }
            advanceFront(of: category)
        }
        holdings[operation] = (names, sequence)
    }

    /// A holder gives back its categories.
    private mutating func giveBack(_ operation: ObjectIdentifier) {
        guard let held = holdings.removeValue(forKey: operation) else { return }
        for name in held.categories {
            guard let category = categories[name] else { continue }
            changeHolders(of: category) { category in
                if let index = category.holders.lastIndex(of: operation) {
                    category.holders.remove(at: index)
                }
            }
            dropIfUnused(name, category)
        }
    }

    /// Hands out the turns of the waiters counted down to zero: grants those that are granted at
    /// their turn, marks the others offered. Returns both, by sequence number.
    private mutating func settleTurns() -> [ObjectIdentifier] {
        var result: [ObjectIdentifier] = []
        while !turned.isEmpty {
            let candidates = turned.compactMap { waiters[$0] }.sorted { $0.request.sequence < $1.request.sequence }
            turned = []
            for candidate in candidates {
                let operation = candidate.request.operation
                // Granting an earlier one may have made it wait again.
                guard let waiter = waiters[operation], waiter.token == candidate.token, waiter.blocked == 0 else { continue }
                if waiter.request.grantsAtTurn {
                    grant(operation)
                    result.append(operation)
                } else if !waiter.offered {
                    waiters[operation]!.offered = true
                    result.append(operation)
                }
            }
        }
        return result
    }

    // MARK: Waiting

    /// Puts a request that cannot be granted in the lines of its categories.
    private mutating func enqueue(_ request: Request, bypasses: Bool) {
        let token = nextToken
        nextToken &+= 1
        // In the table first, with nothing counted yet: the counts of the others are adjusted as
        // its entries go in, and its own is set last.
        waiters[request.operation] = Waiter(request: request, token: token, bypasses: bypasses, blocked: 0)
        var blocked = 0
        for name in request.categories {
            let category = category(named: name)
            if bypasses {
                category.bypassers.append(request.operation)
                if isHeld(category, against: request) { blocked += 1 }
                continue
            }
            let oldFront = category.front
            let entry = LineEntry(operation: request.operation, sequence: request.sequence, token: token)
            // From the back: requests mostly arrive in order (or nearly), so this is O(1) amortised.
            var index = category.line.count
            while index > category.start, category.line[index - 1].sequence > request.sequence {
                index -= 1
                work &+= 1
            }
            category.line.insert(entry, at: index)
            guard index == category.start else {
                blocked += 1
                continue
            }
            if isHeld(category, against: request) { blocked += 1 }
            if let oldFront, let displaced = waiters[oldFront.operation], !isHeld(category, against: displaced.request) {
                // The old front no longer is: the category now keeps it waiting.
                waiters[oldFront.operation]!.blocked += 1
            }
        }
        precondition(blocked > 0, "Internal inconsistency: a request that could be granted waits")
        waiters[request.operation]!.blocked = blocked
    }

    /// Withdraws a waiting request.
    private mutating func withdraw(_ operation: ObjectIdentifier) {
        guard let waiter = waiters.removeValue(forKey: operation) else { return }
        for name in waiter.request.categories {
            guard let category = categories[name] else { continue }
            if waiter.bypasses {
                category.bypassers.removeAll { $0 == operation }
            } else {
                category.dead += 1
                advanceFront(of: category)
                compactIfNeeded(category)
            }
            dropIfUnused(name, category)
        }
    }

    // MARK: Counting

    /// Whether `category` is held by someone other than `request`'s ancestors (the innermost
    /// holder decides: holds nest).
    private func isHeld(_ category: Category, against request: Request) -> Bool {
        guard let innermost = category.holders.last else { return false }
        return !request.ancestors.contains(innermost)
    }

    private func isLive(_ entry: LineEntry) -> Bool {
        waiters[entry.operation]?.token == entry.token
    }

    /// Changes the holders of `category` and adjusts the counts of the waiters this can concern:
    /// the front of its line and its bypassers (the others wait behind the front anyway).
    private mutating func changeHolders(of category: Category, _ change: (Category) -> Void) {
        let front = category.front.flatMap { isLive($0) ? $0.operation : nil }
        let frontWasHeld = front.map { isHeld(category, against: waiters[$0]!.request) }
        let bypassersWereHeld = category.bypassers.map { isHeld(category, against: waiters[$0]!.request) }
        change(category)
        if let front, let frontWasHeld {
            adjust(front, wasBlocked: frontWasHeld, isBlocked: isHeld(category, against: waiters[front]!.request))
        }
        for (bypasser, wasHeld) in zip(category.bypassers, bypassersWereHeld) {
            work &+= 1
            adjust(bypasser, wasBlocked: wasHeld, isBlocked: isHeld(category, against: waiters[bypasser]!.request))
        }
    }

    /// Drops the dead entries at the front of `category`'s line; the request that becomes its
    /// front is no longer kept waiting by an older one there, only (perhaps) by the holders.
    private mutating func advanceFront(of category: Category) {
        guard let front = category.front, !isLive(front) else { return }
        while let front = category.front, !isLive(front) {
            category.start += 1
            category.dead -= 1
            work &+= 1
        }
        if category.start > 32, category.start * 2 > category.line.count {
            category.line.removeFirst(category.start)
            category.start = 0
        }
        if let front = category.front {
            let waiter = waiters[front.operation]!
            adjust(front.operation, wasBlocked: true, isBlocked: isHeld(category, against: waiter.request))
        }
    }

    /// Removes the dead entries of `category`'s line once they make up most of it.
    private mutating func compactIfNeeded(_ category: Category) {
        let entries = category.line.count - category.start
        guard category.dead > 16, category.dead * 2 > entries else { return }
        work &+= UInt64(entries)
        category.line = category.line[category.start...].filter(isLive)
        category.start = 0
        category.dead = 0
    }

    private mutating func adjust(_ operation: ObjectIdentifier, wasBlocked: Bool, isBlocked: Bool) {
        guard wasBlocked != isBlocked else { return }
        if isBlocked {
            waiters[operation]!.blocked += 1
        } else {
            waiters[operation]!.blocked -= 1
            if waiters[operation]!.blocked == 0 { turned.append(operation) }
        }
    }

    private mutating func category(named name: String) -> Category {
        if let category = categories[name] { return category }
        let created = Category()
        categories[name] = created
        return created
    }

    private mutating func dropIfUnused(_ name: String, _ category: Category) {
        if category.isUnused { categories[name] = nil }
    }

    // MARK: Reading

    /// The operations that hold `category` now, outermost first.
    func holders(of category: String) -> [ObjectIdentifier] {
        categories[category]?.holders ?? []
    }

    /// Every held category and its holders (for tests and diagnostics).
    var holders: [String: [ObjectIdentifier]] {
        categories.compactMapValues { $0.holders.isEmpty ? nil : $0.holders }
    }

    /// The waiting requests, oldest first (for tests and diagnostics). O(n log n).
    var waiting: [Request] {
        waiters.values.map(\.request).sorted { $0.sequence < $1.sequence }
    }

    /// What keeps `operation`'s request waiting (see `ExclusivityStateMachine+Blockers.swift`).
    func waitingRequest(of operation: ObjectIdentifier) -> (request: Request, bypasses: Bool)? {
        waiters[operation].map { ($0.request, $0.bypasses) }
    }

    /// The live entries of `category`'s line older than `sequence`, oldest first.
    func olderWaiters(in category: String, than sequence: UInt64) -> [ObjectIdentifier] {
        guard let category = categories[category] else { return [] }
        return category.line[category.start...].filter { isLive($0) && $0.sequence < sequence }.map(\.operation)
    }

    #if OPERATIONS_INTERNAL_CHECKS
    /// Traps if a count or a line is not what it should be. O(waiters + entries).
    func checkInvariants() {
        for (name, category) in categories {
            precondition(!category.isUnused, "Internal inconsistency: unused category \(name) kept")
            if let front = category.front {
                precondition(isLive(front), "Internal inconsistency: dead front in \(name)")
            }
            let live = category.line[category.start...].filter(isLive)
            precondition(category.line.count - category.start - live.count == category.dead,
                         "Internal inconsistency: \(category.dead) dead entries counted in \(name)")
            precondition(zip(live, live.dropFirst()).allSatisfy { $0.sequence < $1.sequence },
                         "Internal inconsistency: line of \(name) out of order")
        }
        for (operation, waiter) in waiters {
            var blocked = 0
            for name in waiter.request.categories {
                let category = categories[name]!
                let isFront = category.front.map { $0.token == waiter.token } ?? false
                if isHeld(category, against: waiter.request) || (!waiter.bypasses && !isFront) { blocked += 1 }
            }
            precondition(blocked == waiter.blocked,
                         "Internal inconsistency: \(operation) counts \(waiter.blocked) blocking categories, not \(blocked)")
        }
    }
    #endif
}
