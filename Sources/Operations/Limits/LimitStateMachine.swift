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
/// **Memory.** A category is *in use* while a permit is held, reserved or out (a rate limit's,
/// for its interval) or a request waits for it. One not in use may be declared again with other
/// permits (its entry is then retired and replaced); entries not in use are dropped once the
/// table has grown to twice its size at the last sweep, so that a process that names many
/// categories in turn does not keep them all. Two declarations of one name with different
/// permits (or intervals) in use at the same time are a programmer error (``mismatch(_:_:_:)``).
///
/// **Without the lock.** A category's count is an atomic word (see ``Category``): an operation
/// whose only gate is one limit (no interval) takes and gives back its permit without the
/// table, by the category its condition was bound to when it was declared
/// (``OpLimit/bound``), while nobody waits. Such a holder has no record here; the table only
/// sees the count.
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
        /// The categories of ``Request/limits``, in the same order, found when it asked.
        let categories: [Category]
        /// How many of its limits, in order, it holds or has reserved.
        var taken = 0
        var stage = Stage.waiting
        /// Whether it was withdrawn while waiting in a line.
        var isWithdrawn = false

        init(request: Request, categories: [Category]) {
            self.request = request
            self.categories = categories
        }

        /// Whether it waits in a line (not withdrawn).
        var isWaiting: Bool { stage == .waiting && !isWithdrawn }
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

    /// The table's categories by name: one entry per name, in use or not (see **Memory**).
    private var categories: [String: Category] = [:]
    /// The size of ``categories`` at which entries not in use are dropped.
    private var sweepThreshold = 32
    private var records: [ObjectIdentifier: Record] = [:]
    private var turned: [Turn] = []
    /// The category found last: an operation's neighbours name the same one over and over.
    private var recent: Category?

    /// Entries of lines visited (for the complexity tests: bounded per event, amortised).
    private(set) var work: UInt64 = 0

    init() {}

    /// Whether no request waits or holds here (holders without a record aside): the storage
    /// skips the machine.
    var hasNoRecords: Bool { records.isEmpty }

    /// Whether no request waits or holds and no permit is in use (for tests). O(categories).
    var isIdle: Bool { records.isEmpty && categories.values.allSatisfy { !$0.isInUse } }

    // MARK: Declaring

    /// The category a declaration of `name` with `spec` is bound to (``OpLimit/bound``): the
    /// table's entry if it has that spec; else a new one, which becomes the entry unless the
    /// entry is in use (then the new one stays retired until it is asked for, see ``resolve(_:)``).
    mutating func declare(_ name: String, _ spec: OpLimit.Spec) -> Category {
        if let current = existingCategory(name) {
            if current.spec == spec { return current }
            guard current.retireIfUnused() else { return Category(name: name, spec: spec, retired: true) }
        }
        let created = Category(name: name, spec: spec)
        install(created)
        return created
    }

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
        var found: [Category] = []
        found.reserveCapacity(request.limits.count)
        for limit in request.limits {
            switch resolve(limit) {
            case .category(let category): found.append(category)
            case .mismatch(let inUse): return .mismatch(category: limit.category, inUse: inUse, declared: limit.spec)
            }
        }
        let record = Record(request: request, categories: found)
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

    /// `operation`'s request was granted and holds one limit without an interval: its record is
    /// dropped, and the operation gives its permit back without the table (as one that took it
    /// without the lock does). Returns the category it holds; `nil` (nothing changes) if its
    /// request is not such a one.
    mutating func dropGrantedRecord(of operation: ObjectIdentifier) -> Category? {
        guard let record = records[operation], record.stage == .granted, record.categories.count == 1,
              record.request.limits[0].spec.interval == nil else { return nil }
        records[operation] = nil
        return record.categories[0]
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
            let category = record.categories[record.taken]
            record.isWithdrawn = true
            category.dead += 1
            dropDeadFront(of: category)
            compactIfNeeded(category)
            if category.liveWaiters == 0 { category.clearWaiters() }
            giveBackTaken(record, includingIntervals: true)
        case .offered:
            giveBackTaken(record, includingIntervals: true)
        case .granted:
            giveBackTaken(record, includingIntervals: false)
        }
        return record.request.payload
    }

    /// A permit of `category` that an operation without a record held comes back while others
    /// wait for it (``Category/giveBackWithoutLock()`` refused): the front of the line takes it.
    mutating func permitCameBack(_ category: Category) {
        giveBack(category)
    }

    /// A rate limit's permit of `category` came back, one interval after the start that took it.
    mutating func intervalEnded(_ category: String) {
        guard let found = categories[category], found.tokensOut > 0 else {
            preconditionFailure("Internal inconsistency: a permit of \(category) came back that was not out")
        }
        found.tokensOut -= 1
        giveBack(found)
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

    /// `name` is about to be held as an exclusive category: returns the permits it is in use
    /// with as a counted category (a programmer error), or `nil`, having retired the table's
    /// unused entry for it, if any, so that no operation takes one of its permits without the
    /// table while the exclusive category is held (it then asks the table, which sees the name
    /// in use).
    mutating func claimForExclusiveUse(_ name: String) -> OpLimit.Spec? {
        guard !categories.isEmpty, let found = existingCategory(name) else { return nil }
        guard found.retireIfUnused() else { return found.spec }
        remove(found)
        return nil
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
        return recent.isInUse
    }

    /// The permits `category` is used with, if it is in use.
    func spec(of category: String) -> OpLimit.Spec? {
        guard let found = categories[category], found.isInUse else { return nil }
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

    /// How many categories are in use (for tests: a category unused is forgotten).
    var keptCategoryCount: Int { categories.values.filter(\.isInUse).count }

    /// How many entries the table keeps, in use or not (for tests of the sweep).
    var entryCount: Int { categories.count }

    // MARK: Finding categories

    /// What a limit counts in.
    enum Resolution {
        /// The table's entry for its name, with its spec.
        case category(Category)
        /// The entry is in use with other permits.
        case mismatch(inUse: OpLimit.Spec)
    }

    /// The table's entry that `limit` counts in, made so if needed: its bound category
    /// (revived) when the entry is not in use, so that its next start goes without the table.
    private mutating func resolve(_ limit: OpLimit) -> Resolution {
        if let current = existingCategory(limit.category) {
            if current === limit.bound || (limit.bound == nil && current.spec == limit.spec) {
                return .category(current)
            }
            guard current.retireIfUnused() else {
                return current.spec == limit.spec ? .category(current) : .mismatch(inUse: current.spec)
            }
            remove(current)
        }
        let entry = limit.bound ?? Category(name: limit.category, spec: limit.spec)
        if entry.isRetired { entry.revive() }
        install(entry)
        return .category(entry)
    }

    private mutating func existingCategory(_ name: String) -> Category? {
        if let recent, recent.name == name { return recent }
        guard let found = categories[name] else { return nil }
        recent = found
        return found
    }

    /// Makes `category` (not retired) the table's entry for its name.
    private mutating func install(_ category: Category) {
        categories[category.name] = category
        recent = category
        if categories.count > sweepThreshold { sweep() }
    }

    private mutating func remove(_ category: Category) {
        categories[category.name] = nil
        if recent === category { recent = nil }
    }

    /// Drops the entries not in use that no request refers to. O(categories + requests), once
    /// per doubling of the table: amortised constant per entry.
    private mutating func sweep() {
        var referred = Set<ObjectIdentifier>()
        for record in records.values {
            for category in record.categories { referred.insert(ObjectIdentifier(category)) }
        }
        work &+= UInt64(categories.count + records.count)
        for (name, category) in categories where !referred.contains(ObjectIdentifier(category)) && category.line.isEmpty {
            if category.retireIfUnused() { categories[name] = nil }
        }
        recent = nil
        sweepThreshold = max(32, 2 * categories.count)
    }

    // MARK: Taking and giving back

    /// Takes `record`'s permits from `record.taken` on, while they are free; stops at the first
    /// that is not, joining its line if `mayWait`. Returns whether it has them all.
    private mutating func advance(_ record: Record, mayWait: Bool) -> Bool {
        while record.taken < record.categories.count {
            let category = record.categories[record.taken]
            if category.takeOrWait(mayWait: mayWait) {
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
        for (limit, category) in zip(record.request.limits, record.categories) where limit.spec.interval != nil {
            category.tokensOut += 1
        }
    }

    /// Gives back the permits `record` took (a granted record's rate-limit permits are out and
    /// come back on their own: `includingIntervals` false).
    private mutating func giveBackTaken(_ record: Record, includingIntervals: Bool) {
        for index in 0..<record.taken where includingIntervals || record.request.limits[index].spec.interval == nil {
            giveBack(record.categories[index])
        }
    }

    /// One permit of `category` comes back: the front of its line takes it and goes on; with
    /// nobody in line, the count goes down.
    private mutating func giveBack(_ category: Category) {
        guard let next = popLiveFront(of: category) else {
            category.release()
            return
        }
        // Handed over: the count stays.
        if category.liveWaiters == 0 { category.clearWaiters() }
        next.taken += 1
        guard advance(next, mayWait: true) else { return }
        if next.request.grantsAtTurn {
            grant(next)
        } else {
            next.stage = .offered
        }
        turned.append(Turn(request: next.request, granted: next.request.grantsAtTurn))
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

    // MARK: Misuse

    /// Traps: `category` is declared with two different specs.
    static func mismatch(_ category: String, _ inUse: OpLimit.Spec, _ declared: OpLimit.Spec) -> Never {
        misuse("The category \"\(category)\" is declared as \(inUse) and as \(declared) by operations in use at the same time. Every declaration of a category must give the same permits (and interval): declare the condition once, for example as a static let, and share it. (mutuallyExclusive(c) is limited(c, permits: 1).)")
    }

    #if OPERATIONS_INTERNAL_CHECKS
    /// Traps if a count or a line is not what it should be. O(requests + entries + categories).
    /// (Holders without a record are not seen: a count may exceed what the records hold.)
    func checkInvariants() {
        precondition(turned.isEmpty, "Internal inconsistency: \(turned.count) turns left untold")
        var held: [ObjectIdentifier: Int] = [:]
        var inLines = Set<ObjectIdentifier>()
        for category in categories.values {
            for record in category.line.elements where !record.isWithdrawn { inLines.insert(ObjectIdentifier(record)) }
        }
        for (operation, record) in records {
            precondition(record.request.operation == operation, "Internal inconsistency: a record filed under another operation")
            precondition(!record.isWithdrawn, "Internal inconsistency: a withdrawn record is kept")
            let limits = record.request.limits
            let categories = record.categories
            switch record.stage {
            case .waiting:
                precondition(record.taken < limits.count, "Internal inconsistency: a waiting record took every permit")
                for category in categories.prefix(record.taken) { held[ObjectIdentifier(category), default: 0] += 1 }
                precondition(inLines.contains(ObjectIdentifier(record)), "Internal inconsistency: a waiting record is in no line")
            case .offered:
                precondition(record.taken == limits.count, "Internal inconsistency: an offered record misses permits")
                for category in categories { held[ObjectIdentifier(category), default: 0] += 1 }
            case .granted:
                precondition(record.taken == limits.count, "Internal inconsistency: a granted record misses permits")
                for (limit, category) in zip(limits, categories) where limit.spec.interval == nil {
                    held[ObjectIdentifier(category), default: 0] += 1
                }
            }
            for category in categories.prefix(record.taken) {
                precondition(!category.isRetired, "Internal inconsistency: a record holds a permit of the retired category \(category.name)")
            }
        }
        for (name, category) in categories {
            precondition(category.name == name && !category.isRetired, "Internal inconsistency: the entry of \(name) is retired or misnamed")
            let inUse = category.inUse
            precondition(inUse <= category.spec.permits, "Internal inconsistency: \(name) has \(inUse) of \(category.spec.permits) permits in use")
            precondition(inUse >= held[ObjectIdentifier(category), default: 0] + category.tokensOut,
                         "Internal inconsistency: \(name) counts \(inUse) permits in use, fewer than \(held[ObjectIdentifier(category), default: 0]) + \(category.tokensOut) out")
            let live = category.line.elements.filter { !$0.isWithdrawn }
            precondition(live.count == category.liveWaiters, "Internal inconsistency: \(name) counts \(category.dead) dead entries")
            precondition(category.hasWaitersBit == !live.isEmpty, "Internal inconsistency: \(name)'s waiters bit is not set exactly when it has live waiters")
            precondition(live.isEmpty || inUse == category.spec.permits,
                         "Internal inconsistency: \(name) has waiters and a free permit")
            for record in live {
                precondition(record.isWaiting && record.categories[record.taken] === category,
                             "Internal inconsistency: a record in the line of \(name) does not wait for it")
            }
        }
    }
    #endif
}
