/// The scheduler of one ``OpQueue``, as a pure state machine.
///
/// It knows the queue's members, its ready lists, how many operations run, how many draining
/// workers were requested, suspension, the width, and barriers. It takes no locks and calls no
/// user code; ``OpQueue`` runs each event under the queue's lock and performs the returned
/// action after unlocking.
///
/// Work per operation is constant: an operation is pushed on a ready list once it is ready (its
/// last dependency finished), popped once, and removed from the member list in O(1). Nothing
/// scans the waiting operations.
///
/// **Draining.** Operations run on *drainers*: jobs (on the worker pool or the underlying
/// Dispatch queue) that pop a ready operation, run it, and pop the next, until nothing can start.
/// At most one drainer is requested and not yet started at a time; a drainer that pops an
/// operation while more could start requests the next one, so parallelism grows as fast as
/// workers take the requests, and a chain of dependent operations runs on one worker with no
/// hand-off between threads.
///
/// **Barriers.** Every operation carries the number of barriers added before it (its epoch).
/// An operation may start only when every earlier barrier has finished; a barrier may start only
/// when every operation of its epoch has left the queue. Operations that become ready too early
/// wait in `held`, per epoch, and move to the ready lists when the barrier before them finishes.
///
/// **At any age.** Memory follows what the queue holds now, not what it ever held: the member
/// list compacts as members leave (see ``MemberList``), stale ready-list and held entries are
/// dropped once they outnumber the live ones (as they are pushed, so a suspended queue whose
/// priorities keep changing does not grow either), the ring buffers and epoch counts shrink, and
/// no count of the operations ever added is kept in a narrow integer (see ``NarrowedCounters``).
/// The scheduler's sizes are in ``footprint``.
struct OpQueueStateMachine {
    typealias Entry = ReadyLists.Entry

    /// What the storage must do after an event.
    struct Action {
        /// Request a drainer (a job that pops and runs ready operations).
        var requestDrainer = false
        /// Waiters of `waitUntilAllOperationsAreFinished()` to release: the queue became empty.
        var waiters: [@Sendable () -> Void] = []
        /// An operation that left the queue, to be released outside the lock.
        var departed: Op?
        /// Whether the operation that left was a barrier.
        var barrierLeft = false
    }

    /// What a drainer must do next.
    enum NextAction {
        /// Start this entry's operation. `requestDrainer` asks for another drainer as well,
        /// because more operations could start in parallel.
        case run(Entry, requestDrainer: Bool)
        /// Nothing can start now; the drainer ends.
        case stop
    }

    /// Stale ready-list entries dropped by the last event; the storage releases them after
    /// unlocking (an entry may hold the last reference to a finished operation).
    private(set) var discarded: [Entry] = []

    /// Hands over the discarded entries; `nil` if there are none (most events drop none, and an
    /// empty array still costs a release where the result is destroyed).
    @inline(__always)
    mutating func takeDiscarded() -> [Entry]? {
        if discarded.isEmpty { return nil }
        defer { discarded = [] }
        return discarded
    }

    /// The width set by the user; negative means "as many as the system sees fit".
    private(set) var maxConcurrentOperationCount = OpQueue.defaultMaxConcurrentOperationCount
    private(set) var isSuspended = false
    private(set) var runningCount = 0
    private(set) var pendingDrainers = 0
    private(set) var members = MemberList()
    private(set) var ready = ReadyLists()

    /// Entries on the ready lists, live and stale.
    var readyCount: Int { ready.count }
    /// Entries in `ready` that are not their operation's live entry.
    private(set) var staleEntries = 0
    private var waiters: [@Sendable () -> Void] = []

    // Barriers.
    private(set) var barrierCount = 0
    private(set) var completedBarriers = 0
    /// Members per epoch, from `completedBarriers` on, barriers not included.
    private(set) var epochCounts = EpochCounts()
    /// Ready barriers by epoch.
    private(set) var readyBarriers: [Int: (entry: Entry, priority: Op.QueuePriority)] = [:]
    /// Ready operations of later epochs, by epoch.
    private(set) var held: [Int: [(entry: Entry, priority: Op.QueuePriority)]] = [:]

    /// The members not yet taken to start (see ``Op/QueueMembership/isTaken``), which
    /// ``Admission`` bounds.
    private(set) var pendingCount = 0

    // Lanes of mutual exclusivity (see `Lane`).
    /// The queue's lane while it has only one (most queues use one category at a time): found
    /// without hashing its category's name or its head, and kept out of the tables below.
    var soleLane: Lane?
    /// The lanes in use, by category, when there are several.
    var lanes: [String: Lane] = [:]
    /// The lane of each head, when there are several.
    var laneOfHead: [ObjectIdentifier: Lane] = [:]

    // Stall detection.
    /// Counts starts, departures and pushes: a stall check compares it to see whether anything
    /// happened since the stall was noticed.
    private(set) var progressGeneration: UInt64 = 0
    private var stallCheckPending = false

    init() {}

    /// The number of operations the queue may run at once.
    var width: Int {
        maxConcurrentOperationCount < 0 ? Int.max : maxConcurrentOperationCount
    }

    var operationCount: Int { members.count }

    // MARK: Membership

    /// Records a new member. `isBarrier` members hold back everything added after them. Returns
    /// whether the member is a barrier.
    @discardableResult
    mutating func addMember(_ operation: Op) -> Bool {
        members.append(operation)
        pendingCount += 1
        operation.membership.epoch = barrierCount
        if operation.membership.isBarrier {
            barrierCount += 1
            epochCounts.append(0)
            return true
        }
        epochCounts[barrierCount - completedBarriers] += 1
        return false
    }

    /// A member finished for good (its completion block returned).
    mutating func removeMember(_ operation: Op, callerWillPoll: Bool = false) -> Action {
        progressGeneration &+= 1
        var action = Action()
        let unparks = releaseLane(of: operation, callerWillPoll: callerWillPoll)
        if !operation.membership.isTaken {
            // It leaves without having been taken to start (an operation that times out waiting).
            pendingCount -= 1
        }
        action.departed = members.remove(operation)
        if operation.membership.isBarrier {
            precondition(operation.membership.epoch == completedBarriers && epochCounts[0] == 0,
                         "Internal inconsistency: barrier of epoch \(operation.membership.epoch) left early")
            readyBarriers[operation.membership.epoch] = nil
            if readyBarriers.isEmpty { readyBarriers = [:] }   // gives back the storage of a burst
            completedBarriers += 1
            action.barrierLeft = true
            epochCounts.removeFirst()
            if let released = held.removeValue(forKey: completedBarriers) {
                if held.isEmpty { held = [:] }
                for item in released {
                    ready.push(item.entry, priority: item.priority)
                    if !Self.isLive(item.entry) { staleEntries += 1 }
                }
            }
            compactIfNeeded()
        } else {
            epochCounts[operation.membership.epoch - completedBarriers] -= 1
        }
        if members.isEmpty {
            action.waiters = waiters
            waiters = []
        }
        action.requestDrainer = requestDrainerIfNeeded(callerWillPoll: callerWillPoll) || unparks
        return action
    }

    // MARK: Readiness

    /// A member became ready (or got a new priority): put it where it can be started.
    ///
    /// The entry with the newest ticket is the operation's live one; the others are stale, and
    /// are dropped as they pile up. Tickets wrap (see ``Op/Ticket``): when the live ticket enters
    /// the other half of the range, every older entry of the operation is dropped at once (O(entries),
    /// once per half range of priority changes of one operation), so that no stale entry lives to
    /// carry the live ticket again. Stale entries dropped here wait in ``discarded``.
    mutating func push(_ entry: Entry, priority: Op.QueuePriority, callerWillPoll: Bool) -> Bool {
        progressGeneration &+= 1
        let operation = entry.operation
        if operation.membership.isBarrier {
            // Pushes can arrive out of order (they are made after the operation's lock is
            // released): keep the entry with the newest ticket, and ignore barriers that are done.
            if operation.membership.epoch >= completedBarriers {
                if let current = readyBarriers[operation.membership.epoch],
                   Op.isNewer(current.entry.ticket, than: entry.ticket) {
                    // The entry already there is newer.
                } else {
                    readyBarriers[operation.membership.epoch] = (entry, priority)
                }
            }
        } else {
            // Track which entry is the operation's live one (the newest ticket); when there are
            // two, the other is stale. Pushes may arrive out of ticket order.
            let epoch = operation.membership.epoch
            let isHeld = epoch > completedBarriers
            var isNewest = true
            if operation.membership.hasLiveReadyEntry {
                isNewest = Op.isNewer(entry.ticket, than: operation.membership.readyTicket)
                if operation.membership.isParked && isNewest {
                    // The stale one is the parked entry, in its lane: dropped when its turn comes.
                    operation.membership.isParked = false
                } else if !isHeld {
                    // Entries in `held` are counted when their epoch moves them to the ready lists.
                    staleEntries += 1
                }
            }
            if isNewest {
                let crossesHalf = (entry.ticket ^ operation.membership.readyTicket) & Op.ticketHalfBit != 0
                operation.membership.readyTicket = entry.ticket
                operation.membership.hasLiveReadyEntry = true
                if crossesHalf {
                    dropEntries(of: operation, heldIn: isHeld ? epoch : nil)
                }
            }
            if isHeld {
                held[epoch, default: []].append((entry, priority))
                compactHeldIfNeeded(epoch: epoch)
            } else {
                ready.push(entry, priority: priority)
                compactIfNeeded()
            }
        }
        return requestDrainerIfNeeded(callerWillPoll: callerWillPoll)
    }

    /// The barrier that may start now, if any: every operation before it has left.
    @inline(__always)
    private var runnableBarrier: (entry: Entry, priority: Op.QueuePriority)? {
        guard barrierCount > completedBarriers, epochCounts[0] == 0 else { return nil }
        return readyBarriers[completedBarriers]
    }

    @inline(__always)
    private var hasStartableOperation: Bool {
        ready.count > staleEntries || runnableBarrier != nil
    }

    /// Whether `entry` is its operation's live entry (not stale).
    private static func isLive(_ entry: Entry) -> Bool {
        entry.operation.membership.hasLiveReadyEntry && entry.ticket == entry.operation.membership.readyTicket
    }

    /// Puts the live entry of an operation that was parked in a lane at the front of the ready
    /// lists (see ``Lane``): the lane lets it go. Returns whether a drainer is needed (none if
    /// `callerWillPoll`: a drainer of this queue asks for the next operation right after).
    mutating func pushUnparked(_ entry: Entry, callerWillPoll: Bool) -> Bool {
        ready.push(entry, priority: .veryHigh)
        progressGeneration &+= 1
        return requestDrainerIfNeeded(callerWillPoll: callerWillPoll)
    }

    /// Drops a lane's entry that is stale, to be released after unlocking.
    mutating func discardFromLane(_ entry: Entry) {
        discarded.append(entry)
    }

    /// Drops stale entries when they outnumber the live ones (or when nothing else is left), so
    /// that they neither pile up nor keep finished operations alive. Amortised O(1): a compaction
    /// of n entries follows at least n/2 stale ones.
    @inline(__always)
    private mutating func compactIfNeeded() {
        guard staleEntries > 0, staleEntries * 2 > ready.count || ready.count == staleEntries else { return }
        compact()
    }

    /// The work of ``compactIfNeeded()``, kept out of line.
    private mutating func compact() {
        let before = discarded.count
        ready.compact(into: &discarded, keeping: Self.isLive)
        staleEntries -= discarded.count - before
    }

    /// Drops the stale entries of a held list once it holds more than twice as many entries as
    /// its epoch has members (each member has at most one live entry). Amortised O(1).
    private mutating func compactHeldIfNeeded(epoch: Int) {
        guard let list = held[epoch],
              list.count > 2 * epochCounts[epoch - completedBarriers] + NarrowedCounters.heldListSlack else { return }
        held[epoch] = list.filter { item in
            if Self.isLive(item.entry) { return true }
            discarded.append(item.entry)
            return false
        }
    }

    /// Drops every entry of `operation` from the ready lists, or from the held list of `epoch`:
    /// its live ticket entered the other half of the range, and the entries there are older.
    private mutating func dropEntries(of operation: Op, heldIn epoch: Int?) {
        if let epoch {
            guard let list = held[epoch] else { return }
            held[epoch] = list.filter { item in
                if item.entry.operation !== operation { return true }
                discarded.append(item.entry)
                return false
            }
        } else {
            // Every entry of the operation in the ready lists is stale now (the new one is not
            // pushed yet), and counted so.
            let before = discarded.count
            ready.compact(into: &discarded) { $0.operation !== operation }
            staleEntries -= discarded.count - before
        }
    }

    @inline(__always)
    private var canStartMore: Bool {
        !isSuspended && runningCount < width && hasStartableOperation
    }

    /// Requests a drainer if an operation could start and no requested drainer is on its way.
    mutating func requestDrainerIfNeeded() -> Bool {
        requestDrainerIfNeeded(callerWillPoll: false)
    }

    /// Requests a drainer if an operation could start and no requested drainer is on its way.
    /// A caller that will poll (a drainer finishing an operation of this queue) counts as one.
    @inline(__always)
    private mutating func requestDrainerIfNeeded(callerWillPoll: Bool) -> Bool {
        guard canStartMore, pendingDrainers == 0, !callerWillPoll else { return false }
        pendingDrainers += 1
        return true
    }

    // MARK: Draining

    /// A requested drainer has started.
    mutating func drainerStarted() {
        precondition(pendingDrainers > 0, "Internal inconsistency: a drainer started unrequested")
        pendingDrainers -= 1
    }

    /// A drainer asks for the next operation, first giving back the slot of the one it ran
    /// (if `releasingSlot`).
    ///
    /// `laneCategory` gives the single exclusivity category of an operation about to start (see
    /// ``Lane``); it is asked only of operations with gates. Without it (the scheduler's own
    /// tests), no operation waits in a lane.
    mutating func next(releasingSlot: Bool, laneCategory: (Op) -> String? = { _ in nil }) -> NextAction {
        if releasingSlot {
            releaseSlotLocked()
        }
        guard canStartMore else { return .stop }
        var next: Entry?
        if let barrier = runnableBarrier {
            readyBarriers[completedBarriers] = nil
            next = barrier.entry
        } else {
            while let candidate = ready.pop() {
                guard Self.isLive(candidate) else {
                    staleEntries -= 1
                    discarded.append(candidate)
                    continue
                }
                let operation = candidate.operation
                if operation.flags.load(ordering: .relaxed) & (Op.Flags.gated | Op.Flags.cancelled) == Op.Flags.gated,
                   !operation.membership.isLaneHead, parksInLane(candidate, category: laneCategory(operation)) {
                    continue
                }
                operation.membership.hasLiveReadyEntry = false
                next = candidate
                break
            }
            compactIfNeeded()
        }
        guard let entry = next else { return .stop }
        if !entry.operation.membership.isTaken {
            entry.operation.membership.isTaken = true
            pendingCount -= 1
        } else {
            // Its previous start is being given back by another drainer (see `startGivenBack`).
            entry.operation.membership.isTakenAgain = true
        }
        runningCount += 1
        progressGeneration &+= 1
        let more = requestDrainerIfNeeded(callerWillPoll: false)
        return .run(entry, requestDrainer: more)
    }

    /// An operation gave back its slot outside a drainer (an asynchronous operation finished).
    mutating func releaseSlot() -> Bool {
        releaseSlotLocked()
        return requestDrainerIfNeeded(callerWillPoll: false)
    }

    /// `operation`, taken to start, gave its start back (it waits for its exclusivity categories,
    /// or its start came to nothing): it is pending again.
    mutating func startGivenBack(_ operation: Op) {
        guard operation.membership.isTaken, operation.membership.slot >= 0 else { return }
        if operation.membership.isTakenAgain {
            // Taken again meanwhile: it is not pending.
            operation.membership.isTakenAgain = false
            return
        }
        operation.membership.isTaken = false
        pendingCount += 1
    }

    private mutating func releaseSlotLocked() {
        precondition(runningCount > 0, "Internal inconsistency: slot released with none running")
        runningCount -= 1
    }

    // MARK: Settings

    mutating func setSuspended(_ suspended: Bool) -> Bool {
        isSuspended = suspended
        return requestDrainerIfNeeded(callerWillPoll: false)
    }

    mutating func setMaxConcurrentOperationCount(_ count: Int) -> Bool {
        maxConcurrentOperationCount = count
        return requestDrainerIfNeeded(callerWillPoll: false)
    }

    // MARK: Stalls

    /// Whether the queue holds operations but can start none and runs none, without being
    /// suspended: every member waits for a dependency (or for a barrier that waits for one).
    /// That is normal while the dependencies run elsewhere, and a sign of a dependency cycle if
    /// it lasts.
    @inline(__always)
    var isStalled: Bool {
        !isSuspended && !members.isEmpty && runningCount == 0 && pendingDrainers == 0 && !hasStartableOperation
    }

    /// If the queue is stalled and no check is pending, marks one pending and returns the current
    /// progress generation for it.
    @inline(__always)
    mutating func stallCheckIfNeeded() -> UInt64? {
        guard isStalled, !stallCheckPending else { return nil }
        stallCheckPending = true
        return progressGeneration
    }

    /// What a stall check, scheduled a while ago, should do now.
    enum StallCheck {
        /// The queue is not stalled any more.
        case none
        /// The queue is stalled again after some progress: check again later, with this generation.
        case later(UInt64)
        /// The queue has been stalled all along: look for cycles among these members.
        case scan([Op])
    }

    mutating func stallCheckFired(generation: UInt64) -> StallCheck {
        stallCheckPending = false
        guard isStalled else { return .none }
        guard generation == progressGeneration else {
            stallCheckPending = true
            return .later(progressGeneration)
        }
        return .scan(members.elements)
    }

    /// What the members wait for because of pending barriers (see ``BarrierWaits``).
    /// O(members) when barriers are pending, O(1) otherwise.
    func barrierWaits() -> BarrierWaits {
        guard barrierCount > completedBarriers else { return BarrierWaits() }
        return BarrierWaits(members: members.elements, completedBarriers: completedBarriers)
    }

    /// A dependency of a member changed: a stall seen before may have become a cycle, so the next
    /// stall check counts as new progress.
    mutating func noteGraphChanged() {
        progressGeneration &+= 1
    }

    // MARK: Waiting

    /// Registers a waiter for the queue to become empty; returns `false` if it already is.
    mutating func addWaiter(_ waiter: @escaping @Sendable () -> Void) -> Bool {
        guard !members.isEmpty else { return false }
        waiters.append(waiter)
        return true
    }
}
