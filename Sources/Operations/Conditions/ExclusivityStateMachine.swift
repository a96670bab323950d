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
/// **Cost.** Each category keeps its waiting requests in a line served by sequence number (a
/// ``SequenceLine``), and each waiting request counts the categories that still keep it waiting
/// (held by someone else, or reserved by an older request): a request, a grant and a release
/// cost O(categories of the request) amortised, whatever the number of waiting requests, when
/// requests arrive in order (one queue's do), and O(categories × log(waiting requests)) when
/// they do not (several queues asking at once). Requests from inside a holding group wait
/// outside the lines, in a line per *anchor* (the innermost of their ancestors that holds the
/// category), served by sequence number too: a group's thousand children that share its category
/// cost as much per release as a thousand operations in a queue, not a thousand each.
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
        /// What the storage keeps with the request (the operation itself), kept alive while the
        /// request waits or holds, and handed back with its turn (the machine drops it when the
        /// request is gone).
        var payload: AnyObject?

        init(operation: ObjectIdentifier, categories: [String], ancestors: Set<ObjectIdentifier>,
             sequence: UInt64 = ExclusivityStateMachine.nextSequence(), grantsAtTurn: Bool = true,
             payload: AnyObject? = nil) {
            self.operation = operation
            self.categories = categories
            self.ancestors = ancestors
            self.sequence = sequence
            self.grantsAtTurn = grantsAtTurn
            self.payload = payload
        }
    }

    /// Relaxed: sequence numbers need only be unique and ordered like the increments, which a
    /// single atomic counter is.
    private static let sequenceCounter = Atomic<UInt64>(0)

    /// A new sequence number, greater than every one handed out before.
    static func nextSequence() -> UInt64 {
        sequenceCounter.add(1, ordering: .relaxed).newValue
    }

    /// One operation's request, from the moment it is made until it is withdrawn or, granted,
    /// its categories are given back. The lines and lists refer to it directly, so that the
    /// counts are kept without looking anything up.
    private final class Record: SequenceOrdered {
        /// The request; its payload is dropped as soon as the request is gone (a dead line entry
        /// must not keep an operation alive). Like every field of the records and categories, only
        /// reached through the machine (see `blocked` below).
        #if OPERATIONS_INTERNAL_CHECKS
        var request: Request
        #else
        @exclusivity(unchecked) var request: Request
        #endif
        /// Whether it comes from inside a group that holds a category: it ignores the lines'
        /// reservations, and waits in the categories' bypass lines instead (see
        /// ``Category/bypassers``).
        let bypasses: Bool
        // Only reached through the machine, which its storage's lock guards: the runtime's
        // exclusivity checks are off outside the checked build, as for the operations' state.
        #if OPERATIONS_INTERNAL_CHECKS
        /// While it waits: how many of its categories keep it waiting; its turn comes at zero.
        var blocked = 0
        /// Whether its turn came and it was told so (and has not asked again since).
        var offered = false
        /// Whether it was granted: its operation holds the categories.
        var isGranted = false
        /// Whether it was withdrawn, or its categories given back.
        var isGone = false
        #else
        @exclusivity(unchecked) var blocked = 0
        @exclusivity(unchecked) var offered = false
        @exclusivity(unchecked) var isGranted = false
        @exclusivity(unchecked) var isGone = false
        #endif

        /// Its categories (those of ``request``, in the same order), so that granting and giving
        /// back look nothing up (the first inline: most requests name one category, and need no
        /// array). Set as it holds or waits, emptied as it goes. Unowned: a
        /// category's line holds its waiting records, and a category in use (held or waited for)
        /// is never swept, so each is alive while a record that is not gone refers to it.
        #if OPERATIONS_INTERNAL_CHECKS
        var categoryObjects = SmallList<CategoryReference>()
        #else
        @exclusivity(unchecked) var categoryObjects = SmallList<CategoryReference>()
        #endif

        init(_ request: consuming Request, bypasses: Bool) {
            self.request = request
            self.bypasses = bypasses
        }

        /// Whether it waits (its entries in the lines are live).
        var isWaiting: Bool { !isGranted && !isGone }

        var sequenceNumber: UInt64 { request.sequence }
    }

    /// A category and its name (see ``existingCategory(named:)``).
    private struct RecentCategory {
        let name: String
        let category: Category
    }

    /// A record's reference to one of its categories (see ``Record/categoryObjects``). Unowned
    /// and unchecked (no reference counting, which every grant and release paid twice): a
    /// category in use, held or waited for, is never swept, and a record lets go of its
    /// categories as it goes. The checked build checks it (a plain `unowned` traps on a category
    /// that is gone), and the sanitizer runs would report one.
    private struct CategoryReference {
        #if OPERATIONS_INTERNAL_CHECKS
        unowned let category: Category
        #else
        unowned(unsafe) let category: Category
        #endif
    }

    /// One category in use: held, or waited for.
    private final class Category {
        #if OPERATIONS_INTERNAL_CHECKS
        /// The holders: the outermost first, each nested under the one before.
        var holders: [ObjectIdentifier] = []
        /// The waiting requests that do not bypass reservations, served by sequence number. Its
        /// first entry (the front) is always live; others may be dead (requests withdrawn),
        /// counted in `dead`.
        var line = SequenceLine<Record>()
        var dead = 0
        /// The waiting requests that bypass the line's reservations (see ``Record/bypasses``),
        /// by anchor: those of one anchor reserve for each other, like the line, and only the
        /// front of each is free as soon as its anchor is the innermost holder.
        var bypassers: [Anchor: BypassLine] = [:]
        /// The anchor of each waiting bypasser, by operation.
        var anchors: [ObjectIdentifier: Anchor] = [:]
        /// How many waiting bypassers have each operation among their ancestors: a new holder that
        /// none has is nobody's anchor, and the others are not looked at.
        var bypasserAncestors: [ObjectIdentifier: Int] = [:]
        #else
        @exclusivity(unchecked) var holders: [ObjectIdentifier] = []
        @exclusivity(unchecked) var line = SequenceLine<Record>()
        @exclusivity(unchecked) var dead = 0
        @exclusivity(unchecked) var bypassers: [Anchor: BypassLine] = [:]
        @exclusivity(unchecked) var anchors: [ObjectIdentifier: Anchor] = [:]
        @exclusivity(unchecked) var bypasserAncestors: [ObjectIdentifier: Int] = [:]
        #endif

        /// Whether it is unused and counted in `unusedCategories` (kept for reuse until swept).
        #if OPERATIONS_INTERNAL_CHECKS
        var isParked = false
        #else
        @exclusivity(unchecked) var isParked = false
        #endif

        var front: Record? { line.first }
        var isUnused: Bool { holders.isEmpty && line.isEmpty && anchors.isEmpty }

        /// The anchor that is free now: the innermost holder (`nil` if none).
        var top: Anchor { Anchor(holder: holders.last) }
    }

    /// Where a bypasser stands in a category: the innermost of its ancestors that holds the
    /// category (`nil` if none does: it is free once nobody holds it). Holds nest, so a bypasser
    /// is kept waiting by the category's holders exactly when its anchor is not the innermost.
    private struct Anchor: Hashable {
        let holder: ObjectIdentifier?
    }

    /// The bypassers of one anchor in one category, served by sequence number. Its first entry
    /// (the front) is always live; others may be dead (withdrawn), counted in `dead`.
    private final class BypassLine {
        #if OPERATIONS_INTERNAL_CHECKS
        var line = SequenceLine<Record>()
        var dead = 0
        #else
        @exclusivity(unchecked) var line = SequenceLine<Record>()
        @exclusivity(unchecked) var dead = 0
        #endif

        var front: Record? { line.first }
        var liveCount: Int { line.count - dead }
    }

    /// The categories in use, and unused ones kept for a while (a category used over and over is
    /// not made and dropped each time).
    private var categories: [String: Category] = [:]
    /// The category found last (see ``existingCategory(named:)``); forgotten when unused
    /// categories are swept.
    private var recentCategory: RecentCategory?
    /// How many of `categories` are unused; they are swept once they outnumber the others (and
    /// a few dozen), so that names used once do not pile up.
    private var unusedCategories = 0
    /// The requests that wait or hold, by operation.
    private var records: [ObjectIdentifier: Record] = [:]
    /// Waiting requests whose count of blocking categories dropped to zero during the current
    /// event.
    private var turned: [Record] = []
    /// Counts the entries and waiters the machine visits: a measure of its work that does not
    /// depend on the machine it runs on (see `ExclusivityComplexityTests`). Wraps.
    private(set) var work: UInt64 = 0

    // MARK: Events

    /// An operation asks for categories, or asks again when its turn was offered. Returns `true`
    /// if they are granted now; otherwise the request waits, and its turn comes with a later
    /// event (``release(_:)``). An operation whose earlier request still waits (or holds) with an
    /// older sequence number withdraws it first (the turns this gives are handed out by
    /// ``takeTurns()``).
    ///
    /// A request older than the one the operation has in the table is stale, and is refused
    /// (returns `false`, changes nothing): its operation passed its gates again since (a late
    /// dependency), and its newer request was made first, by a thread that overtook the one making
    /// this one. Replacing the newer one would leave the operation waiting for a turn that never
    /// comes.
    ///
    /// Without `mayWait`, a request that cannot be granted now changes nothing and returns
    /// `false` (the caller asks again, allowed to wait, once it made sure it may).
    mutating func request(_ request: consuming Request, mayWait: Bool = true) -> Bool {
        if let record = records[request.operation] {
            if record.isWaiting && record.request.sequence == request.sequence {
                return askAgain(record, mayWait: mayWait)
            }
            if record.request.sequence > request.sequence { return false }
            guard mayWait else { return false }
            #if OPERATIONS_INTERNAL_CHECKS
            // What a stale request got (its gate moved on) may be held still, given back soon.
            precondition(!record.isGranted || record.request.sequence < request.sequence,
                         "Internal inconsistency: an operation asks for \(request.categories) while it holds \(record.request.categories)")
            #endif
            // Never waits behind itself: what it held or asked for before is given up first.
            remove(record)
        }
        let bypasses = !request.ancestors.isEmpty && request.ancestors.contains { records[$0]?.isGranted == true }
        if request.categories.count == 1 {
            // The common case: one category, looked up once.
            let name = request.categories[0]
            let category = existingCategory(named: name)
            if let category, !isAvailable(category, to: request, bypasses: bypasses) {
                if mayWait { enqueue(request, bypasses: bypasses, in: unparked(category)) }
                return false
            }
            // The request moves into its record, without a copy (of its three references).
            let operation = request.operation
            let record = Record(request, bypasses: bypasses)
            record.isGranted = true
            records[operation] = record
            let held = category.map { unparked($0) } ?? self.category(named: name)
            record.categoryObjects.append(CategoryReference(category: held))
            hold(operation, held)
            return true
        }
        for name in request.categories {
            if let category = categories[name], !isAvailable(category, to: request, bypasses: bypasses) {
                if mayWait { enqueue(request, bypasses: bypasses) }
                return false
            }
        }
        let operation = request.operation
        let record = Record(request, bypasses: bypasses)
        record.isGranted = true
        records[operation] = record
        for name in record.request.categories {
            let held = category(named: name)
            record.categoryObjects.append(CategoryReference(category: held))
            hold(operation, held)
        }
        return true
    }

    /// ``request(_:mayWait:)`` for an operation whose request of sequence number `sequence` waits
    /// (its turn was offered, most often): without building the request again. Returns `nil` if
    /// it has no such request (the caller makes it with `request(_:mayWait:)`).
    mutating func requestAgain(_ operation: ObjectIdentifier, sequence: UInt64, mayWait: Bool = true) -> Bool? {
        guard let record = records[operation], record.isWaiting, record.request.sequence == sequence else { return nil }
        return askAgain(record, mayWait: mayWait)
    }

    private mutating func askAgain(_ record: Record, mayWait: Bool) -> Bool {
        if record.blocked == 0 {
            grant(record)
            return true
        }
        if mayWait { record.offered = false }
        return false
    }

    /// `operation` finished, or no longer asks: it gives back what it holds, or withdraws its
    /// waiting request. Returns the operations whose turn came, in the order they asked (those
    /// that ``Request/grantsAtTurn`` hold their categories now).
    mutating func release(_ operation: ObjectIdentifier) -> [ObjectIdentifier] {
        releaseReturningRequests(operation).turns.map(\.operation)
    }

    /// ``release(_:)``, returning the payload of the request given up (the caller releases it
    /// outside its lock) and the requests whose turn came.
    mutating func releaseReturningRequests(_ operation: ObjectIdentifier) -> (released: AnyObject?, turns: SmallList<Request>) {
        // Looked up once, and removed by its position.
        guard let index = records.index(forKey: operation) else { return (nil, takeTurnRequests()) }
        let record = records.values[index]
        records.remove(at: index)
        let released = record.request.payload
        retire(record)
        return (released, takeTurnRequests())
    }

    /// Whether `operation` waits with a request of sequence number `sequence`, or holds what such
    /// a request got (to give back only what a given request took).
    func knows(_ operation: ObjectIdentifier, sequence: UInt64) -> Bool {
        records[operation]?.request.sequence == sequence
    }

    /// Whether some operation holds a category or waits (if not, a release has nothing to do).
    var hasRequests: Bool { !records.isEmpty }

    /// Whether an operation holds `category` or waits for it (a category that is neither is
    /// parked or forgotten: a counted category of the same name may then be declared).
    func isInUse(_ category: String) -> Bool {
        guard let found = categories[category] else { return false }
        return !found.isUnused
    }

    /// Whether `operation` waits (neither holds nor never asked).
    func isWaiting(_ operation: ObjectIdentifier) -> Bool {
        records[operation]?.isWaiting ?? false
    }

    /// Replaces the payload of `operation`'s request (its storage renews it as the operation
    /// asks again and goes on waiting).
    mutating func setPayload(of operation: ObjectIdentifier, _ payload: AnyObject) {
        records[operation]?.request.payload = payload
    }

    /// The payload of `operation`'s request, if it waits or holds.
    func payload(of operation: ObjectIdentifier) -> AnyObject? {
        records[operation]?.request.payload
    }

    /// The waiting requests whose payload `matches` (for a queue that is suspended). O(requests).
    func waitingRequests(where matches: (AnyObject?) -> Bool) -> [Request] {
        records.values.filter { $0.isWaiting && matches($0.request.payload) }.map(\.request)
    }

    /// Hands out the turns of the waiters counted down to zero: grants those that are granted at
    /// their turn, marks the others offered. Returns both, by sequence number.
    mutating func takeTurns() -> [ObjectIdentifier] {
        takeTurnRequests().map(\.operation)
    }

    /// ``takeTurns()``, returning the requests.
    /// (Most events give one turn or none: the list keeps the first inline, without an array.)
    mutating func takeTurnRequests() -> SmallList<Request> {
        var result = SmallList<Request>()
        if turned.count == 1 {
            // The common case, without copying the list.
            let record = turned.removeLast()
            if record.isWaiting && record.blocked == 0 {
                if record.request.grantsAtTurn {
                    grant(record)
                    result.append(record.request)
                } else if !record.offered {
                    record.offered = true
                    result.append(record.request)
                }
            }
        }
        while !turned.isEmpty {
            var candidates = turned
            turned.removeAll(keepingCapacity: true)
            if candidates.count > 1 { candidates.sort { $0.request.sequence < $1.request.sequence } }
            // Granting an earlier one may have made a later one wait again.
            for record in candidates where record.isWaiting && record.blocked == 0 {
                if record.request.grantsAtTurn {
                    grant(record)
                    result.append(record.request)
                } else if !record.offered {
                    record.offered = true
                    result.append(record.request)
                }
            }
        }
        return result
    }

    // MARK: Granting and giving back

    private func isAvailable(_ category: Category, to request: Request, bypasses: Bool) -> Bool {
        if isHeld(category, against: request) { return false }
        let front = bypasses ? category.bypassers[anchor(of: request, in: category)]?.front : category.front
        guard let front else { return true }
        return front.request.sequence > request.sequence
    }

    /// Grants a waiting request whose turn came.
    private mutating func grant(_ record: Record) {
        record.isGranted = true
        record.offered = false
        for reference in record.categoryObjects {
            let category = reference.category
            if record.bypasses {
                // Its entry, the front of its bypass line, is dead now; dropped once it holds.
                let anchor = leaveBypassers(record, category)
                hold(record.request.operation, category)
                advanceBypassFront(of: category, anchor)
                continue
            }
            // Its entry, the front, is dead now; it is dropped once the new holder is in.
            category.dead += 1
            hold(record.request.operation, category)
        }
    }

    /// Makes `operation` a holder of `category`.
    private mutating func hold(_ operation: ObjectIdentifier, _ category: Category) {
        changeHolders(of: category, operation) { $0.holders.append(operation) }
        advanceFront(of: category)
    }

    /// Gives back what `record` holds, or withdraws it if it waits.
    private mutating func remove(_ record: Record) {
        let operation = record.request.operation
        if let index = records.index(forKey: operation), records.values[index] === record { records.remove(at: index) }
        retire(record)
    }

    /// ``remove(_:)`` for a record already out of `records`.
    private mutating func retire(_ record: Record) {
        let operation = record.request.operation
        let wasGranted = record.isGranted
        record.isGone = true
        record.isGranted = false
        record.request.payload = nil
        let categoryObjects = record.categoryObjects
        record.categoryObjects = SmallList()
        for reference in categoryObjects {
            let category = reference.category
            if wasGranted {
                changeHolders(of: category, operation) { category in
                    if let index = category.holders.lastIndex(of: operation) {
                        category.holders.remove(at: index)
                    }
                }
            } else if record.bypasses {
                let anchor = leaveBypassers(record, category)
                advanceBypassFront(of: category, anchor)
            } else {
                category.dead += 1
                advanceFront(of: category)
                compactIfNeeded(category)
            }
            if category.isUnused { park(category) }
        }
    }

    /// `category`, in use again if it was parked.
    private mutating func unparked(_ category: Category) -> Category {
        if category.isParked {
            category.isParked = false
            unusedCategories -= 1
        }
        return category
    }

    /// `category` became unused: it is kept for reuse, and the unused ones are swept once they
    /// are many (O(categories), paid for by as many releases).
    private mutating func park(_ category: Category) {
        guard !category.isParked else { return }
        category.isParked = true
        unusedCategories += 1
        guard unusedCategories > 32, unusedCategories * 2 > categories.count else { return }
        work &+= UInt64(categories.count)
        categories = categories.filter { !$0.value.isParked }
        recentCategory = nil
        unusedCategories = 0
    }

    // MARK: Waiting

    /// Puts a request that cannot be granted in the lines of its categories (`known`: its only
    /// category, looked up already).
    private mutating func enqueue(_ request: Request, bypasses: Bool, in known: Category? = nil) {
        let record = Record(request, bypasses: bypasses)
        records[request.operation] = record
        var blocked = 0
        for name in request.categories {
            let category = known ?? category(named: name)
            record.categoryObjects.append(CategoryReference(category: category))
            if bypasses {
                if joinBypassers(record, category) { blocked += 1 }
                continue
            }
            let oldFront = category.front
            // O(1) for a request that arrives in order, O(log n) for one that does not.
            work &+= UInt64(category.line.append(record))
            guard category.front === record else {
                blocked += 1
                continue
            }
            if isHeld(category, against: request) { blocked += 1 }
            if let oldFront, !isHeld(category, against: oldFront.request) {
                // The old front no longer is: the category now keeps it waiting.
                oldFront.blocked += 1
            }
        }
        precondition(blocked > 0, "Internal inconsistency: a request that could be granted waits")
        record.blocked = blocked
    }

    // MARK: Bypassing

    /// The innermost holder of `category` among `request`'s ancestors (see ``Anchor``).
    /// O(holders), a handful: holds nest as deep as groups do.
    private func anchor(of request: Request, in category: Category) -> Anchor {
        for holder in category.holders.reversed() where request.ancestors.contains(holder) {
            return Anchor(holder: holder)
        }
        return Anchor(holder: nil)
    }

    /// Puts a waiting bypasser in the bypass line of its anchor. Returns whether `category` keeps
    /// it waiting: an older bypasser of the same anchor is before it, or its anchor is not free.
    private mutating func joinBypassers(_ record: Record, _ category: Category) -> Bool {
        let anchor = anchor(of: record.request, in: category)
        category.anchors[record.request.operation] = anchor
        for ancestor in record.request.ancestors { category.bypasserAncestors[ancestor, default: 0] += 1 }
        let bypassers: BypassLine
        if let line = category.bypassers[anchor] {
            bypassers = line
        } else {
            bypassers = BypassLine()
            category.bypassers[anchor] = bypassers
        }
        let oldFront = bypassers.front
        work &+= UInt64(bypassers.line.append(record))
        guard bypassers.front === record else { return true }
        let isFree = category.top == anchor
        // An older request arrived late: the old front, free until now, waits behind it.
        if let oldFront, isFree { oldFront.blocked += 1 }
        return !isFree
    }

    /// A bypasser is granted or withdrawn: its entry is dead (dropped by
    /// ``advanceBypassFront(of:_:)``), and it no longer counts. Returns its anchor.
    private mutating func leaveBypassers(_ record: Record, _ category: Category) -> Anchor {
        let anchor = category.anchors.removeValue(forKey: record.request.operation) ?? Anchor(holder: nil)
        for ancestor in record.request.ancestors {
            if let count = category.bypasserAncestors[ancestor], count > 1 {
                category.bypasserAncestors[ancestor] = count - 1
            } else {
                category.bypasserAncestors[ancestor] = nil
            }
        }
        category.bypassers[anchor]?.dead += 1
        return anchor
    }

    /// Drops the dead entries at the front of `anchor`'s bypass line (and the line once none is
    /// live); the bypasser that becomes its front is no longer kept waiting by an older one.
    private mutating func advanceBypassFront(of category: Category, _ anchor: Anchor) {
        guard let bypassers = category.bypassers[anchor] else { return }
        guard bypassers.liveCount > 0 else {
            category.bypassers[anchor] = nil
            return
        }
        if let front = bypassers.front, !front.isWaiting {
            while let front = bypassers.front, !front.isWaiting {
                work &+= UInt64(bypassers.line.removeFirst())
                bypassers.dead -= 1
            }
            if let front = bypassers.front {
                adjust(front, wasBlocked: true, isBlocked: category.top != anchor)
            }
        }
        if bypassers.dead > 16, bypassers.dead * 2 > bypassers.line.count {
            work &+= UInt64(bypassers.line.removeAll { !$0.isWaiting })
            bypassers.dead = 0
        }
    }

    /// The front of `anchor`'s bypass line, if it still waits.
    private func liveBypassFront(of category: Category, _ anchor: Anchor) -> Record? {
        category.bypassers[anchor]?.front.flatMap { $0.isWaiting ? $0 : nil }
    }

    /// Whether `category` keeps the waiting bypasser `record` waiting (see ``joinBypassers(_:_:)``).
    private func bypassBlocks(_ record: Record, _ category: Category) -> Bool {
        guard let anchor = category.anchors[record.request.operation],
              let bypassers = category.bypassers[anchor] else { return true }
        return bypassers.front !== record || category.top != anchor
    }

    /// Changes the holders of `category` with `change`, and places every waiting bypasser again
    /// at its anchor, adjusting the counts of those whose lot changed. O(bypassers × holders):
    /// only for a holder that becomes or stops being an anchor (see ``changeHolders(of:_:_:)``).
    private mutating func reanchorBypassers(of category: Category, _ change: () -> Void) {
        let waiting = category.bypassers.values.flatMap { $0.line.elements.filter(\.isWaiting) }
            .sorted { $0.request.sequence < $1.request.sequence }
        let wereBlocked = waiting.map { bypassBlocks($0, category) }
        change()
        work &+= UInt64(waiting.count)
        category.bypassers = [:]
        category.anchors = [:]
        for record in waiting {
            let anchor = anchor(of: record.request, in: category)
            category.anchors[record.request.operation] = anchor
            if let bypassers = category.bypassers[anchor] {
                _ = bypassers.line.append(record)
            } else {
                let bypassers = BypassLine()
                _ = bypassers.line.append(record)
                category.bypassers[anchor] = bypassers
            }
        }
        for (record, wasBlocked) in zip(waiting, wereBlocked) {
            adjust(record, wasBlocked: wasBlocked, isBlocked: bypassBlocks(record, category))
        }
    }

    // MARK: Counting

    /// Whether `category` is held by someone other than `request`'s ancestors (the innermost
    /// holder decides: holds nest).
    private func isHeld(_ category: Category, against request: Request) -> Bool {
        guard let innermost = category.holders.last else { return false }
        return !request.ancestors.contains(innermost)
    }

    /// Changes the holders of `category` (`holder` comes or goes) and adjusts the counts of the
    /// waiters this can concern: the front of its line, and the fronts of the bypass lines whose
    /// anchor was or becomes the innermost holder (the others wait behind a front anyway). A
    /// holder that becomes the anchor of waiting bypassers, or one that goes while some are
    /// anchored on it, has them all placed again (rare: a group's children ask after it holds,
    /// and are done before it gives back).
    private mutating func changeHolders(of category: Category, _ holder: ObjectIdentifier, _ change: (Category) -> Void) {
        let front = category.front.flatMap { $0.isWaiting ? $0 : nil }
        let frontWasHeld = front.map { isHeld(category, against: $0.request) }
        if category.anchors.isEmpty {
            // The common case: no bypasser waits.
            change(category)
        } else if (category.bypasserAncestors[holder] ?? 0) > 0
                    || (category.bypassers[Anchor(holder: holder)]?.liveCount ?? 0) > 0 {
            reanchorBypassers(of: category) { change(category) }
        } else {
            let oldTop = category.top
            change(category)
            let newTop = category.top
            if oldTop != newTop {
                if let free = liveBypassFront(of: category, oldTop) { adjust(free, wasBlocked: false, isBlocked: true) }
                if let freed = liveBypassFront(of: category, newTop) { adjust(freed, wasBlocked: true, isBlocked: false) }
            }
        }
        if let front, let frontWasHeld {
            adjust(front, wasBlocked: frontWasHeld, isBlocked: isHeld(category, against: front.request))
        }
    }

    /// Drops the dead entries at the front of `category`'s line; the request that becomes its
    /// front is no longer kept waiting by an older one there, only (perhaps) by the holders.
    private mutating func advanceFront(of category: Category) {
        guard let front = category.front, !front.isWaiting else { return }
        while let front = category.front, !front.isWaiting {
            work &+= UInt64(category.line.removeFirst())
            category.dead -= 1
        }
        if let front = category.front {
            adjust(front, wasBlocked: true, isBlocked: isHeld(category, against: front.request))
        }
    }

    /// Removes the dead entries of `category`'s line once they make up most of it.
    private mutating func compactIfNeeded(_ category: Category) {
        guard category.dead > 16, category.dead * 2 > category.line.count else { return }
        work &+= UInt64(category.line.removeAll { !$0.isWaiting })
        category.dead = 0
    }

    private mutating func adjust(_ record: Record, wasBlocked: Bool, isBlocked: Bool) {
        guard wasBlocked != isBlocked else { return }
        if isBlocked {
            record.blocked += 1
        } else {
            record.blocked -= 1
            if record.blocked == 0 { turned.append(record) }
        }
    }

    private mutating func category(named name: String) -> Category {
        if let category = existingCategory(named: name) {
            return unparked(category)
        }
        let created = Category()
        categories[name] = created
        recentCategory = RecentCategory(name: name, category: created)
        return created
    }

    /// The category named `name`, if the machine keeps it (in use or parked). The last one found
    /// is remembered: an operation's requests and its neighbours' name the same category over and
    /// over, and comparing a name costs less than hashing it.
    private mutating func existingCategory(named name: String) -> Category? {
        if let recent = recentCategory, recent.name == name { return recent.category }
        guard let found = categories[name] else { return nil }
        recentCategory = RecentCategory(name: name, category: found)
        return found
    }

    // MARK: Reading

    /// The operations that hold `category` now, outermost first.
    func holders(of category: String) -> [ObjectIdentifier] {
        categories[category]?.holders ?? []
    }

    /// How many categories the machine keeps, in use or parked for reuse (for tests).
    var keptCategoryCount: Int { categories.count }

    /// How many entries the line of `category` has room for (for tests: it shrinks as it empties).
    func lineCapacity(of category: String) -> Int {
        categories[category]?.line.capacity ?? 0
    }

    /// Every held category and its holders (for tests and diagnostics).
    var holders: [String: [ObjectIdentifier]] {
        categories.compactMapValues { $0.holders.isEmpty ? nil : $0.holders }
    }

    /// The waiting requests, oldest first (for tests and diagnostics). O(n log n).
    var waiting: [Request] {
        records.values.filter(\.isWaiting).map(\.request).sorted { $0.sequence < $1.sequence }
    }

    /// `operation`'s waiting request, and whether it bypasses reservations (for diagnostics).
    func waitingRequest(of operation: ObjectIdentifier) -> (request: Request, bypasses: Bool)? {
        guard let record = records[operation], record.isWaiting else { return nil }
        return (record.request, record.bypasses)
    }

    /// The waiting bypassers of `operation`'s anchor in `category` older than it, oldest first.
    func olderBypassers(in category: String, than operation: ObjectIdentifier) -> [ObjectIdentifier] {
        guard let category = categories[category], let record = records[operation],
              let anchor = category.anchors[operation], let bypassers = category.bypassers[anchor] else { return [] }
        return bypassers.line.elements.filter { $0.isWaiting && $0.request.sequence < record.request.sequence }
            .sorted { $0.request.sequence < $1.request.sequence }.map(\.request.operation)
    }

    /// The waiting requests in `category`'s line older than `sequence`, oldest first.
    func olderWaiters(in category: String, than sequence: UInt64) -> [ObjectIdentifier] {
        guard let category = categories[category] else { return [] }
        return category.line.elements.filter { $0.isWaiting && $0.request.sequence < sequence }
            .sorted { $0.request.sequence < $1.request.sequence }.map(\.request.operation)
    }

    #if OPERATIONS_INTERNAL_CHECKS
    /// Traps if a count or a line is not what it should be. O(requests + entries).
    func checkInvariants() {
        for (name, category) in categories {
            precondition(category.isUnused == category.isParked, "Internal inconsistency: category \(name) parked: \(category.isParked)")
            if let front = category.front {
                precondition(front.isWaiting, "Internal inconsistency: dead front in \(name)")
            }
            let live = category.line.elements.filter(\.isWaiting)
            precondition(category.line.count - live.count == category.dead,
                         "Internal inconsistency: \(category.dead) dead entries counted in \(name)")
            precondition(category.line.isOrdered, "Internal inconsistency: line of \(name) out of order")
            for (anchor, bypassers) in category.bypassers {
                precondition(bypassers.liveCount > 0, "Internal inconsistency: an empty bypass line kept in \(name)")
                precondition(bypassers.front?.isWaiting == true, "Internal inconsistency: dead bypass front in \(name)")
                precondition(bypassers.line.isOrdered, "Internal inconsistency: bypass line of \(name) out of order")
                let live = bypassers.line.elements.filter(\.isWaiting)
                precondition(live.count == bypassers.liveCount && live.allSatisfy { category.anchors[$0.request.operation] == anchor },
                             "Internal inconsistency: bypass line of \(name) counts \(bypassers.dead) dead entries")
            }
            precondition(category.bypassers.values.reduce(0) { $0 + $1.liveCount } == category.anchors.count,
                         "Internal inconsistency: bypassers of \(name) miscounted")
        }
        precondition(categories.values.filter(\.isParked).count == unusedCategories,
                     "Internal inconsistency: \(unusedCategories) unused categories counted")
        for (operation, record) in records where record.isWaiting {
            var blocked = 0
            for name in record.request.categories {
                let category = categories[name]!
                if record.bypasses {
                    let anchor = self.anchor(of: record.request, in: category)
                    precondition(category.anchors[operation] == anchor, "Internal inconsistency: \(operation) waits in \(name) at the wrong anchor")
                    if bypassBlocks(record, category) { blocked += 1 }
                } else if isHeld(category, against: record.request) || category.front !== record {
                    blocked += 1
                }
            }
            precondition(blocked == record.blocked,
                         "Internal inconsistency: \(operation) counts \(record.blocked) blocking categories, not \(blocked)")
        }
    }
    #endif
}
