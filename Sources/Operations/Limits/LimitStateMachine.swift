/// Who holds the permits of which counted category, and who waits for them, as a pure state
/// machine (``Exclusivity`` takes the lock, tells the operations whose turn came, and runs the
/// timers that bring a rate limit's permits back).
///
/// **Counted categories.** A category of ``OpCondition/limited(_:permits:)`` has `permits`
/// permits; an operation holds one from its start until it finishes. A category of
/// ``OpCondition/rateLimited(_:permits:per:clock:)`` has `permits` permits too, but one taken at
/// a start comes back one interval later, whatever the operation does meanwhile. One permit
/// count covers every queue of the process. (A category with one permit and no interval is a
/// ``OpCondition/mutuallyExclusive(_:)`` category, kept by ``ExclusivityStateMachine``, which
/// also honours groups; this machine never sees it.)
///
/// **Order.** Each category has a first-in, first-out line. A request takes its categories one
/// after the other in the order of their names (so that requests that hold some and wait for
/// the next can never wait for each other in a circle); it waits in the line of the first it
/// cannot take, holding those before it. When a permit comes back, the front of the line takes
/// it at once and goes on to its next category. A newcomer never overtakes the line: a
/// category with a waiter has no free permit.
///
/// **Turns.** A waiting request that got its last permit has its *turn*. One that
/// ``Request/grantsAtTurn`` (an operation started by hand, whose thread waits) is granted then;
/// any other is *offered* its permits: they stay reserved for it, and it takes them by asking
/// again when its queue starts it. A rate limit's interval is counted from the grant, the
/// moment the operation starts, never from the offer, so that waiting for a queue slot with a
/// reserved permit cannot let two starts fall within one interval.
///
/// **Memory.** A category is kept while a permit is held, reserved or out (a rate limit's, for
/// its interval) or a request waits for it, and forgotten once none is: a name can then be
/// declared again with other permits. (A forgotten category is parked for reuse, a few at most,
/// so that a category whose permits all come back now and then is not made again each time.) Two declarations of one name with different permits (or
/// intervals) in use at the same time are a programmer error (``mismatch(_:_:_:)``).
struct LimitStateMachine {
    /// The counted categories an operation asks for as it starts.
    struct Request {
        /// The operation.
        let operation: ObjectIdentifier
        /// Its counted categories, one per name, sorted by name: the order in which it takes them.
        let limits: [OpLimit]
        /// Its place in the order of exclusivity requests (to give back only what a given
        /// request took, see ``knows(_:sequence:)``).
        let sequence: UInt64
        /// Whether the request is granted at its turn (an operation started by hand) rather than
        /// offered its permits.
        let grantsAtTurn: Bool
        /// What the storage keeps with the request (the operation, or how to tell it of its turn).
        var payload: AnyObject?
    }

    /// Where a request stands.
    enum Stage: Equatable {
        /// It waits in the line of `limits[taken]`, holding the permits before it.
        case waiting
        /// Its turn came: it has every permit reserved, and takes them by asking again.
        case offered
        /// It holds its permits (its rate limits' permits are out, on their way back).
        case granted
    }

    /// A request that waits or holds. A reference: the lines hold it, and a withdrawn one stays
    /// in its line (dead) until it reaches the front or the line is compacted.
    final class Record {
        var request: Request
        /// How many of its limits, in order, it holds or has reserved.
        var taken = 0
        var stage = Stage.waiting
        /// Whether it was withdrawn while waiting in a line.
        var isWithdrawn = false

        init(request: Request) {
            self.request = request
        }

        /// Whether it waits in a line (not withdrawn).
        var isWaiting: Bool { stage == .waiting && !isWithdrawn }
    }

    /// A counted category in use.
    final class Category {
        /// Its permits (changed only while it is parked: a parked category is not in use).
        var spec: OpLimit.Spec
        /// The permits held, reserved, or out (a rate limit's, until they come back).
        var inUse = 0
        /// The rate limit's permits that are out (included in ``inUse``), for the checks.
        var tokensOut = 0
        /// The requests waiting for a permit, first come first served; some may be dead.
        var line = RingBuffer<Record>()
        /// How many entries of ``line`` were withdrawn.
        var dead = 0
        /// Whether it is unused, kept only to be reused without allocating and hashing its name
        /// again (it counts as forgotten: another declaration may take it).
        var isParked = false

        init(spec: OpLimit.Spec) {
            self.spec = spec
        }

        var liveWaiters: Int { line.count - dead }
        var isUnused: Bool { inUse == 0 && liveWaiters == 0 }
    }

    /// A request whose turn came.
    struct Turn {
        /// The request.
        let request: Request
        /// Whether it holds its permits now (it ``Request/grantsAtTurn``), rather than being
        /// offered them.
        let granted: Bool
    }

    /// What asking came to.
    enum Outcome: Equatable {
        /// The operation holds its permits now. `startsIntervals`: its rate limits' intervals
        /// begin now (the storage starts their timers); `false` for a request granted before.
        case granted(startsIntervals: Bool)
        /// It waits in a line (or still does), holding the permits it took before it.
        case waiting
        /// It may not wait (its queue is suspended) and not every permit was free: it holds
        /// nothing and made no record.
        case refused
        /// The category is in use with other permits: a programmer error the storage traps on.
        case mismatch(category: String, inUse: OpLimit.Spec, declared: OpLimit.Spec)
    }

    private var categories: [String: Category] = [:]
    /// How many of ``categories`` are parked.
    private var parkedCount = 0
    private var records: [ObjectIdentifier: Record] = [:]
    private var turned: [Turn] = []
    /// The category found last: an operation's neighbours name the same one over and over.
    private var recent: (name: String, category: Category)?

    /// Entries of lines visited (for the complexity tests: bounded per event, amortised).
    private(set) var work: UInt64 = 0

    init() {}

    /// Whether no request waits or holds and no permit is out: the storage skips the machine.
    var isIdle: Bool { categories.count == parkedCount }

    // MARK: Events

    /// `request.operation` asks for its permits as it starts. An operation that asked before with
    /// the same sequence number asks again: an offered one takes its reserved permits; a
    /// waiting one goes on waiting (or, with `mayWait` false, withdraws: `refused`).
    mutating func request(_ request: Request, mayWait: Bool = true) -> Outcome {
        if let record = records[request.operation] {
            switch record.stage {
            case .offered:
                grant(record)
                return .granted(startsIntervals: true)
            case .granted:
                return .granted(startsIntervals: false)
            case .waiting:
                guard mayWait else {
                    _ = release(request.operation)
                    return .refused
                }
                return .waiting
            }
        }
        for limit in request.limits {
            if let category = existingCategory(limit.category), !category.isParked, category.spec != limit.spec {
                return .mismatch(category: limit.category, inUse: category.spec, declared: limit.spec)
            }
        }
        let record = Record(request: request)
        if advance(record, mayWait: mayWait) {
            records[request.operation] = record
            grant(record)
            return .granted(startsIntervals: true)
        }
        guard mayWait else {
            giveBackTaken(record, includingIntervals: true)
            return .refused
        }
        records[request.operation] = record
        return .waiting
    }

    /// `operation` finished, or no longer asks: it gives back what it holds or has reserved (a
    /// rate limit's permit that is out comes back only at the end of its interval), or withdraws
    /// its waiting request. Returns the payload of its request (released by the caller outside
    /// its lock), if it had one.
    @discardableResult
    mutating func release(_ operation: ObjectIdentifier, sequence: UInt64? = nil) -> AnyObject? {
        guard let index = records.index(forKey: operation) else { return nil }
        let record = records.values[index]
        if let sequence, record.request.sequence != sequence { return nil }
        records.remove(at: index)
        switch record.stage {
        case .waiting:
            let category = categories[record.request.limits[record.taken].category]!
            record.isWithdrawn = true
            category.dead += 1
            dropDeadFront(of: category)
            compactIfNeeded(category)
            giveBackTaken(record, includingIntervals: true)
            forgetIfUnused(record.request.limits[record.taken].category, category)
        case .offered:
            giveBackTaken(record, includingIntervals: true)
        case .granted:
            giveBackTaken(record, includingIntervals: false)
        }
        return record.request.payload
    }

    /// A rate limit's permit of `category` came back, one interval after the start that took it.
    mutating func intervalEnded(_ category: String) {
        guard let found = categories[category], found.tokensOut > 0 else {
            preconditionFailure("Internal inconsistency: a permit of \(category) came back that was not out")
        }
        found.tokensOut -= 1
        giveBack(category, found)
    }

    /// Withdraws the requests that wait or were offered their turn and whose payload `matches`
    /// (the operations of a queue being suspended). Returns them. O(requests).
    mutating func withdrawWaiting(where matches: (AnyObject?) -> Bool) -> [Request] {
        let withdrawn = records.values.filter { $0.stage != .granted && matches($0.request.payload) }.map(\.request)
        for request in withdrawn { release(request.operation) }
        return withdrawn
    }

    /// Hands out the turns that came since the last call, in the order they came.
    mutating func takeTurns() -> [Turn] {
        guard !turned.isEmpty else { return [] }
        defer { turned = [] }
        return turned
    }

    /// Replaces the payload of `operation`'s request.
    mutating func setPayload(of operation: ObjectIdentifier, _ payload: AnyObject) {
        records[operation]?.request.payload = payload
    }

    // MARK: Reading

    /// Whether `operation` has a request (with sequence number `sequence`, if given).
    func knows(_ operation: ObjectIdentifier, sequence: UInt64? = nil) -> Bool {
        guard let record = records[operation] else { return false }
        return sequence.map { record.request.sequence == $0 } ?? true
    }

    /// Whether `category` is the one found last and is in use (a comparison of names, no hashing).
    func isRecentlyInUse(_ category: String) -> Bool {
        guard let recent, recent.name == category else { return false }
        return !recent.category.isParked
    }

    /// The permits `category` is used with, if it is in use.
    func spec(of category: String) -> OpLimit.Spec? {
        guard let found = categories[category], !found.isParked else { return nil }
        return found.spec
    }

    /// How many permits of `category` are held, reserved or out (for tests).
    func permitsInUse(of category: String) -> Int {
        categories[category]?.inUse ?? 0
    }

    /// The payloads of the requests waiting for `category`, first first (for tests).
    func waiting(in category: String) -> [AnyObject] {
        categories[category]?.line.elements.filter(\.isWaiting).compactMap(\.request.payload) ?? []
    }

    /// How many categories are kept (for tests: a category unused is forgotten).
    var keptCategoryCount: Int { categories.count - parkedCount }

    // MARK: Taking and giving back

    /// Takes `record`'s permits from `record.taken` on, while they are free; stops at the first
    /// that is not, joining its line if `mayWait`. Returns whether it has them all.
    private mutating func advance(_ record: Record, mayWait: Bool) -> Bool {
        let limits = record.request.limits
        while record.taken < limits.count {
            let limit = limits[record.taken]
            let category = category(limit)
            if category.liveWaiters == 0 && category.inUse < category.spec.permits {
                category.inUse += 1
                record.taken += 1
                continue
            }
            if mayWait {
                work &+= 1
                category.line.append(record)
            }
            return false
        }
        return true
    }

    /// `record` takes the permits it holds or has reserved: its rate limits' permits are out.
    private mutating func grant(_ record: Record) {
        record.stage = .granted
        for limit in record.request.limits where limit.spec.interval != nil {
            categories[limit.category]!.tokensOut += 1
        }
    }

    /// Gives back the permits `record` took (a granted record's rate-limit permits are out and
    /// come back on their own: `includingIntervals` false).
    private mutating func giveBackTaken(_ record: Record, includingIntervals: Bool) {
        for limit in record.request.limits.prefix(record.taken) where includingIntervals || limit.spec.interval == nil {
            giveBack(limit.category, existingCategory(limit.category)!)
        }
    }

    /// One permit of `category` comes back: the front of its line takes it and goes on.
    private mutating func giveBack(_ name: String, _ category: Category) {
        category.inUse -= 1
        while category.inUse < category.spec.permits, let next = popLiveFront(of: category) {
            category.inUse += 1
            next.taken += 1
            guard advance(next, mayWait: true) else { continue }
            if next.request.grantsAtTurn {
                grant(next)
            } else {
                next.stage = .offered
            }
            turned.append(Turn(request: next.request, granted: next.request.grantsAtTurn))
        }
        forgetIfUnused(name, category)
    }

    private mutating func popLiveFront(of category: Category) -> Record? {
        dropDeadFront(of: category)
        guard let front = category.line.popFirst() else { return nil }
        work &+= 1
        return front
    }

    private mutating func dropDeadFront(of category: Category) {
        while let front = category.line.first, front.isWithdrawn {
            _ = category.line.popFirst()
            category.dead -= 1
            work &+= 1
        }
    }

    /// Removes the dead entries of `category`'s line once they make up most of it.
    private mutating func compactIfNeeded(_ category: Category) {
        guard category.dead > 16, category.dead * 2 > category.line.count else { return }
        var kept = RingBuffer<Record>()
        while let record = category.line.popFirst() {
            work &+= 1
            if !record.isWithdrawn { kept.append(record) }
        }
        category.line = kept
        category.dead = 0
    }

    /// Forgets `category` if no one uses it: it is parked, to be reused, and the parked ones
    /// are dropped once there are more than a few (a process that names many categories in turn
    /// does not keep them all).
    private mutating func forgetIfUnused(_ name: String, _ category: Category) {
        guard category.isUnused, !category.isParked else { return }
        category.isParked = true
        category.line = RingBuffer()
        category.dead = 0
        parkedCount += 1
        guard parkedCount > 32 else { return }
        work &+= UInt64(categories.count)
        categories = categories.filter { !$0.value.isParked }
        parkedCount = 0
        recent = nil
    }

    private mutating func existingCategory(_ name: String) -> Category? {
        if let recent, recent.name == name { return recent.category }
        guard let found = categories[name] else { return nil }
        recent = (name, found)
        return found
    }

    private mutating func category(_ limit: OpLimit) -> Category {
        if let found = existingCategory(limit.category) {
            if found.isParked {
                found.isParked = false
                found.spec = limit.spec
                parkedCount -= 1
            }
            return found
        }
        let created = Category(spec: limit.spec)
        categories[limit.category] = created
        recent = (limit.category, created)
        return created
    }

    // MARK: Misuse

    /// Traps: `category` is declared with two different specs.
    static func mismatch(_ category: String, _ inUse: OpLimit.Spec, _ declared: OpLimit.Spec) -> Never {
        misuse("The category \"\(category)\" is declared as \(inUse) and as \(declared) by operations in use at the same time. Every declaration of a category must give the same permits (and interval): declare the condition once, for example as a static let, and share it. (mutuallyExclusive(c) is limited(c, permits: 1).)")
    }

    #if OPERATIONS_INTERNAL_CHECKS
    /// Traps if a count or a line is not what it should be. O(requests + entries + categories).
    func checkInvariants() {
        precondition(turned.isEmpty, "Internal inconsistency: \(turned.count) turns left untold")
        var held: [String: Int] = [:]
        var inLines = Set<ObjectIdentifier>()
        for category in categories.values {
            for record in category.line.elements where !record.isWithdrawn { inLines.insert(ObjectIdentifier(record)) }
        }
        for (operation, record) in records {
            precondition(record.request.operation == operation, "Internal inconsistency: a record filed under another operation")
            precondition(!record.isWithdrawn, "Internal inconsistency: a withdrawn record is kept")
            let limits = record.request.limits
            switch record.stage {
            case .waiting:
                precondition(record.taken < limits.count, "Internal inconsistency: a waiting record took every permit")
                for limit in limits.prefix(record.taken) { held[limit.category, default: 0] += 1 }
                precondition(categories[limits[record.taken].category] != nil && inLines.contains(ObjectIdentifier(record)),
                             "Internal inconsistency: a waiting record is in no line")
            case .offered:
                precondition(record.taken == limits.count, "Internal inconsistency: an offered record misses permits")
                for limit in limits { held[limit.category, default: 0] += 1 }
            case .granted:
                precondition(record.taken == limits.count, "Internal inconsistency: a granted record misses permits")
                for limit in limits where limit.spec.interval == nil { held[limit.category, default: 0] += 1 }
            }
        }
        precondition(categories.values.filter(\.isParked).count == parkedCount, "Internal inconsistency: \(parkedCount) parked categories counted")
        for (name, category) in categories {
            precondition(category.isUnused == category.isParked, "Internal inconsistency: category \(name) parked: \(category.isParked)")
            precondition(category.inUse <= category.spec.permits, "Internal inconsistency: \(name) has \(category.inUse) of \(category.spec.permits) permits in use")
            precondition(category.inUse == held[name, default: 0] + category.tokensOut,
                         "Internal inconsistency: \(name) counts \(category.inUse) permits in use, not \(held[name, default: 0]) + \(category.tokensOut) out")
            let live = category.line.elements.filter { !$0.isWithdrawn }
            precondition(live.count == category.liveWaiters, "Internal inconsistency: \(name) counts \(category.dead) dead entries")
            precondition(live.isEmpty || category.inUse == category.spec.permits,
                         "Internal inconsistency: \(name) has waiters and a free permit")
            for record in live {
                precondition(record.isWaiting && record.request.limits[record.taken].category == name,
                             "Internal inconsistency: a record in the line of \(name) does not wait for it")
            }
        }
    }
    #endif
}
