import Benchmark
import Foundation
import Operations
import Workloads

// `swift package benchmark` runs these: each workload for our OpQueue and, in the same run, for
// Foundation's OperationQueue (and Dispatch where it fits), with wall clock, malloc counts and
// peak resident memory. `swift run -c release compare` prints the same comparison as ratios.

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .mallocCountTotal, .peakMemoryResident],
        timeUnits: .milliseconds,
        warmupIterations: 1,
        maxDuration: .seconds(5),
        maxIterations: 5
    )

    Benchmark("1. independent 100k / ours") { _ in Workloads.oursIndependent(100_000) }
    Benchmark("1. independent 100k / Foundation") { _ in Workloads.foundationIndependent(100_000) }
    Benchmark("1. independent 100k / Dispatch") { _ in Workloads.dispatchIndependent(100_000) }

    Benchmark("2. width-1 100k / ours") { _ in Workloads.oursSerial(100_000) }
    Benchmark("2. width-1 100k / Foundation") { _ in Workloads.foundationSerial(100_000) }
    Benchmark("2. width-1 100k / Dispatch") { _ in Workloads.dispatchSerial(100_000) }

    Benchmark("3. chain 10k / ours") { _ in Workloads.oursChain(10_000) }
    Benchmark("3. chain 10k / Foundation", configuration: .init(warmupIterations: 0, maxIterations: 1)) { _ in
        Workloads.foundationChain(10_000)
    }
    Benchmark("3. chain 100k / ours") { _ in Workloads.oursChain(100_000) }

    Benchmark("4. fan-in 10k / ours") { _ in Workloads.oursFanIn(10_000) }
    Benchmark("4. fan-in 10k / Foundation") { _ in Workloads.foundationFanIn(10_000) }

    Benchmark("5. random DAG 100k / ours") { _ in Workloads.oursRandomDAG(100_000) }

    Benchmark("6. 200 × 20 ms blocking / ours") { _ in Workloads.oursBlocking(200, milliseconds: 20) }
    Benchmark("6. 200 × 20 ms blocking / Foundation", configuration: .init(warmupIterations: 0, maxIterations: 1)) { _ in
        Workloads.foundationBlocking(200, milliseconds: 20)
    }

    Benchmark("7. BlockOp 8 × 50 ms / ours") { _ in Workloads.oursBlockOp(blocks: 8, milliseconds: 50) }
    Benchmark("7. BlockOp 8 × 50 ms / Foundation") { _ in Workloads.foundationBlockOp(blocks: 8, milliseconds: 50) }

    Benchmark("8. 1M pending / ours", configuration: .init(warmupIterations: 0, maxIterations: 1)) { _ in
        blackHole(Workloads.oursPending(1_000_000))
    }
    Benchmark("8. 1M pending / Foundation", configuration: .init(warmupIterations: 0, maxIterations: 1)) { _ in
        blackHole(Workloads.foundationPending(1_000_000))
    }

    Benchmark("9. start latency (1,000 samples) / ours", configuration: .init(timeUnits: .microseconds)) { _ in
        blackHole(Workloads.oursLatency(samples: 1_000))
    }
    Benchmark("9. start latency (1,000 samples) / Foundation", configuration: .init(timeUnits: .microseconds)) { _ in
        blackHole(Workloads.foundationLatency(samples: 1_000))
    }

    Benchmark("10. 10k groups × 10 children / ours") { _ in Workloads.oursGroups(10_000, children: 10) }
    Benchmark("10. 100k ops without groups / ours") { _ in Workloads.oursUngrouped(10_000, children: 10) }

    Benchmark("11. 100k ops × 1 condition / ours") { _ in Workloads.oursConditioned(100_000) }
    Benchmark("11. 100k ops without conditions / ours") { _ in Workloads.oursUnconditioned(100_000) }
}
