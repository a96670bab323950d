import Foundation

/// The bounds, and how a row is measured and judged.
///
/// **The time bound.** A structure that costs O(N log N) takes at 2N at most
/// 2N·log(2N) / (N·log N) = 2·(1 + log 2 / log N) times what it takes at N: 2.20 at N = 1,000,
/// 2.12 at N = 100,000. A quadratic one takes 4 times as long once the quadratic part dominates,
/// N^1.5 2.83 times. A row fails above 2.6: room for the noise of a shared two-core machine
/// (about 20 % over the N log N ratio) below anything that grows as N^1.4 or faster. Each time is
/// the fastest of several runs (the least disturbed), with the N and 2N runs taken in turn.
///
/// **Two clocks.** Every run is timed by the CPU time of the whole process (all its threads) and
/// by the wall clock. The CPU time decides: other processes on the machine hardly change it,
/// where they inflate the wall-clock time by any factor. It has noise of its own, though: two of
/// our threads contending for a lock spin, more so when the machine preempts the holder. So a CPU
/// ratio over the bound by less than a quarter (``noiseMargin``) fails only if the wall-clock
/// ratio is over the bound too; one further over fails whatever the wall clock says.
///
/// **Re-measuring.** A row that fails by less than the noise margin is measured again, in a fresh
/// process, up to twice more, and judged on the fastest runs of all its measurements. A row
/// further over is not (noise does not do that to the fastest of five runs). A false alarm then
/// needs every one of 15 runs at 2N to be slowed, by both clocks, while a run at N was not.
///
/// **Memory.** A structure that should hold only what is in it now (the never-empty queues, the
/// long-lived group, the retries) notes the heap in use half-way through its run and at its end,
/// with about the same operations in flight both times (see ``HeapMarks``). In the run at 2N, the
/// heap may gain at most 1 byte per operation of the second half (N of them), plus 64 KiB: a
/// queue that kept 8 bytes per operation ever added (issue 22, defect 3) fails by a factor of
/// eight. The run at N is shown beside it: a structure that keeps memory for what went through it
/// gains about twice as much at 2N.
enum Verdicts {
    /// The most t(2N) / t(N) may be.
    static let growthLimit = 2.6

    /// How many times a row over its bound is measured in all.
    static let measurements = 3

    /// Heap the run at 2N may gain over its second half: bytes per operation of that half, and
    /// a fixed allowance (the operations in flight at the two marks differ by a few).
    static let keptBytesPerOperation = 1
    static let keptBytesAllowance = 64 * 1024

    /// How a growth check or a figure came out.
    struct Judgement {
        var timeFails: Bool
        var memoryFails: Bool
        /// Over the bound, but not so far over that measuring again could change it.
        var worthMeasuringAgain: Bool

        var passes: Bool { !timeFails && !memoryFails }
    }

    /// How far over its bound a CPU ratio may be and still be noise: it fails only if the
    /// wall-clock ratio agrees, and is measured again.
    static let noiseMargin = 1.25

    /// Whether `ratio` is over `limit`, and whether it is near enough to be noise.
    private static func judge(_ ratio: Ratio, limit: Double) -> (fails: Bool, nearLimit: Bool) {
        guard ratio.cpu > limit else { return (false, false) }
        let nearLimit = ratio.cpu <= noiseMargin * limit
        return (!nearLimit || ratio.wall > limit, nearLimit)
    }

    static func judgeGrowth(_ measured: Measured, n: Int, checksMemory: Bool) -> Judgement {
        let (timeFails, nearLimit) = judge(measured.ratioOfB, limit: growthLimit)
        var memoryFails = false
        var memoryCouldBeNoise = false
        if checksMemory, let kept = measured.keptB {
            let allowed = n * keptBytesPerOperation + keptBytesAllowance
            memoryFails = kept > allowed
            memoryCouldBeNoise = kept <= 2 * allowed   // what 100 operations in flight might hold
        }
        let worthMeasuringAgain = (timeFails && nearLimit) || (memoryFails && memoryCouldBeNoise)
        return Judgement(timeFails: timeFails, memoryFails: memoryFails, worthMeasuringAgain: worthMeasuringAgain)
    }

    static func judgeFigure(_ measured: Measured, limit: Double) -> Judgement {
        let (timeFails, nearLimit) = judge(measured.ratioOfA, limit: limit)
        return Judgement(timeFails: timeFails, memoryFails: false, worthMeasuringAgain: timeFails && nearLimit)
    }
}
