import Dispatch

extension WorkerPool {
    /// The jobs waiting for a worker: one FIFO per quality-of-service class, served from the
    /// highest class down, so that when workers are scarce, work of a higher class goes first
    /// (a `.userInitiated` queue's drainer does not wait behind a backlog of `.background` ones).
    struct JobQueue {
        /// By ``rank(of:)``: user-interactive first, background last.
        private var lanes = [RingBuffer<Job>](repeating: RingBuffer(), count: JobQueue.classes.count)
        /// The highest lane that may hold jobs (no lane above it does).
        private var highest = JobQueue.classes.count
        private(set) var count = 0

        var isEmpty: Bool { count == 0 }

        mutating func append(_ job: @escaping Job, qualityOfService: DispatchQoS.QoSClass) {
            let rank = JobQueue.rank(of: qualityOfService)
            lanes[rank].append(job)
            highest = min(highest, rank)
            count += 1
        }

        /// The oldest job of the highest class that has one, that class and its ``rank(of:)``.
        mutating func popFirst() -> (job: Job, qualityOfService: DispatchQoS.QoSClass, rank: Int)? {
            guard count > 0 else { return nil }
            while lanes[highest].isEmpty { highest += 1 }
            count -= 1
            return (lanes[highest].popFirst()!, JobQueue.classes[highest], highest)
        }

        /// How many classes (and ranks) there are.
        static var classCount: Int { classes.count }

        private static let classes: [DispatchQoS.QoSClass] = [.userInteractive, .userInitiated, .default, .utility, .background]

        /// The lane of a class; an unspecified class counts as `.default`.
        static func rank(of qualityOfService: DispatchQoS.QoSClass) -> Int {
            switch qualityOfService {
            case .userInteractive: 0
            case .userInitiated: 1
            case .utility: 3
            case .background: 4
            default: 2
            }
        }
    }
}
