/// One run of a workload: how long the part that grows took, and, for a structure that should
/// stay the same size while work goes through it, how much heap it kept.
struct Sample {
    /// Wall-clock seconds taken by the timed part of the workload.
    var seconds: Double
    /// CPU seconds the process spent in it, every thread's.
    var cpuSeconds: Double
    /// Heap bytes in use at the end of the steady state minus at its start, with the structure
    /// alive both times (`nil` where the workload does not measure it).
    var keptBytes: Int? = nil
}
