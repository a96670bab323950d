import Dispatch

extension WorkerPool {
    /// The jobs waiting for a worker: one FIFO lane per quality-of-service class, and above them
    /// a lane for the library's own short jobs (the handlers of timers: a timeout, the end of a
    /// ``DelayOp``), so that when workers are scarce, work of a higher class goes first (a
    /// `.userInitiated` queue's drainer does not wait behind a backlog of `.background` ones) and
    /// a timer fires on time whatever the backlog.
    ///
    /// The lanes are served from the highest down, with aging: a lane that holds jobs and has been
    /// passed over ``starvationLimit`` times (a job of another lane was taken instead) is served
    /// next, so that no class waits forever under a constant load of a higher one. A pure state
    /// machine: it takes no lock (the pool's lock guards it) and runs no job.
    struct JobQueue {
        /// A waiting job and the class it runs at.
        private struct Entry {
            /// The job.
            var job: Work
            /// The class it runs at (in the library's lane, that of the operation it serves).
            var qualityOfService: DispatchQoS.QoSClass
        }

        /// By rank: the library's lane first, then user-interactive down to background.
        private var lanes = [RingBuffer<Entry>](repeating: RingBuffer(), count: JobQueue.laneCount)
        /// How many times each lane that holds jobs was passed over since it was last served (or
        /// since its first job arrived).
        private var passedOver = [Int](repeating: 0, count: JobQueue.laneCount)
        /// Bit `rank` is set when that lane holds jobs.
        private var occupied: UInt8 = 0
        private(set) var count = 0

        var isEmpty: Bool { count == 0 }

        /// Adds a job of the class `qualityOfService` to the back of its lane.
        mutating func append(_ job: @escaping Job, qualityOfService: DispatchQoS.QoSClass) {
            append(Entry(job: .closure(job), qualityOfService: qualityOfService), rank: JobQueue.rank(of: qualityOfService))
        }

        /// Adds a job of a task (``OpTaskExecutor``) of the class `qualityOfService` to the back
        /// of its lane.
        mutating func append(taskJob job: UnownedJob, qualityOfService: DispatchQoS.QoSClass) {
            append(Entry(job: .taskJob(job), qualityOfService: qualityOfService), rank: JobQueue.rank(of: qualityOfService))
        }

        /// Adds a short job of the library's own (a timer's handler) to the back of the library's
        /// lane; it runs at `qualityOfService`, the class of the operation it serves.
        mutating func appendLibraryWork(_ job: @escaping Job, qualityOfService: DispatchQoS.QoSClass) {
            append(Entry(job: .closure(job), qualityOfService: qualityOfService), rank: JobQueue.libraryRank)
        }

        private mutating func append(_ entry: Entry, rank: Int) {
            lanes[rank].append(entry)
            if occupied & (1 << rank) == 0 {
                occupied |= 1 << rank
                passedOver[rank] = 0
            }
            count += 1
        }

        /// The next job: the oldest of the highest lane that holds one, unless a lane has been
        /// passed over ``starvationLimit`` times (then the oldest of the lane passed over most);
        /// with the class it runs at and the rank of its lane.
        mutating func popFirst() -> (job: Work, qualityOfService: DispatchQoS.QoSClass, rank: Int)? {
            guard count > 0 else { return nil }
            let highest = occupied.trailingZeroBitCount
            var rank = highest
            if occupied & (occupied &- 1) != 0 {
                // Several lanes hold jobs: the others are passed over, unless one has starved.
                var starved = -1
                var most = JobQueue.starvationLimit - 1
                for lane in highest..<JobQueue.laneCount where occupied & (1 << lane) != 0 && passedOver[lane] > most {
                    starved = lane
                    most = passedOver[lane]
                }
                if starved >= 0 { rank = starved }
                for lane in highest..<JobQueue.laneCount where lane != rank && occupied & (1 << lane) != 0 {
                    passedOver[lane] += 1
                }
            }
            passedOver[rank] = 0
            let entry = lanes[rank].popFirst()!
            if lanes[rank].isEmpty { occupied &= ~(1 << rank) }
            count -= 1
            return (entry.job, entry.qualityOfService, rank)
        }

        /// How many times a lane holding jobs may be passed over before it is served. Under a
        /// constant load of higher lanes, a lane gets one job in about this many.
        static let starvationLimit = 16

        /// How many lanes (and ranks) there are: the library's and one per class.
        static var laneCount: Int { 1 + classes.count }

        /// The rank of the library's lane, above every class.
        static let libraryRank = 0

        private static let classes: [DispatchQoS.QoSClass] = [.userInteractive, .userInitiated, .default, .utility, .background]

        /// The lane of a class; an unspecified class counts as `.default`.
        static func rank(of qualityOfService: DispatchQoS.QoSClass) -> Int {
            switch qualityOfService {
            case .userInteractive: 1
            case .userInitiated: 2
            case .utility: 4
            case .background: 5
            default: 3
            }
        }
    }
}
