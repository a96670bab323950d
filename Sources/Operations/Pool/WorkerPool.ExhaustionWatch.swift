extension WorkerPool {
    /// Tells when the pool has been exhausted (at its limit, every worker blocked, jobs waiting)
    /// for long enough to report it, once per episode.
    struct ExhaustionWatch {
        private var since: ContinuousClock.Instant?
        private var reported = false

        /// Notes whether the pool is exhausted now; returns `true` once the episode has lasted
        /// `delay`, the first time.
        mutating func note(_ isExhausted: Bool, after delay: Duration) -> Bool {
            guard isExhausted else {
                since = nil
                reported = false
                return false
            }
            let now = ContinuousClock.now
            guard let since else {
                self.since = now
                return false
            }
            guard !reported, now - since >= delay else { return false }
            reported = true
            return true
        }
    }
}
