// swift-tools-version: 6.1
import PackageDescription
import Foundation

// The benchmarks live in their own package so that `swift test` at the root does not build them.
//
//     swift package benchmark                       package-benchmark: every workload, with
//                                                   wall clock, malloc counts and peak memory
//     swift run -c release compare                  the comparison table (ours / Foundation /
//                                                   Dispatch / TaskGroup, in one run)
//     swift run -c release complexity               the complexity checks: every structure that
//                                                   grows with N timed at N and 2N; fails if one
//                                                   grows faster than N log N

// The root package is referenced by path; its identity is the name of its folder, which
// depends on where it was cloned.
let rootPackage = URL(fileURLWithPath: Context.packageDirectory).deletingLastPathComponent().lastPathComponent

// swift-async-queue's `FIFOQueue`, the peer of row 15 (async operations on a width-1 queue), is
// not among the packages this machine resolves: it is built only when SWIFT_ASYNC_QUEUE_PATH names
// a local checkout of github.com/dfed/swift-async-queue (see README.md). Without it the package
// builds as before, and row 15 is compared with the AsyncStream stand-in alone.
let asyncQueuePath = Context.environment["SWIFT_ASYNC_QUEUE_PATH"].flatMap { $0.isEmpty ? nil : $0 }

let package = Package(
    name: "swift-operations-benchmarks",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "compare", targets: ["Compare"]),
        .executable(name: "instructions", targets: ["Instructions"]),
        .executable(name: "complexity", targets: ["Complexity"]),
    ],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        // The workloads, written once for our library and once for each peer.
        .target(
            name: "Workloads",
            dependencies: [.product(name: "Operations", package: rootPackage)],
            path: "Sources/Workloads",
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // `swift run -c release compare`: every workload for us and the peers, side by side in one
        // run, printed as a table with the ratios.
        .executableTarget(
            name: "Compare",
            dependencies: ["Workloads", .product(name: "Operations", package: rootPackage)],
            path: "Sources/Compare",
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // `./instructions.sh`: instructions per operation, counted by callgrind (the stable
        // regression figure for the hot path).
        .executableTarget(
            name: "Instructions",
            dependencies: ["Workloads", .product(name: "Operations", package: rootPackage)],
            path: "Sources/Instructions",
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // `swift run -c release complexity`: each structure that grows with N (dependents,
        // dependencies, queues, groups, exclusivity waiters, ...) timed at N and 2N, in child
        // processes; exits non-zero if a ratio says worse than N log N.
        .executableTarget(
            name: "Complexity",
            dependencies: ["HeapStatistics", "Workloads", .product(name: "Operations", package: rootPackage)],
            path: "Sources/Complexity",
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // The heap in use, from the allocator (mallinfo2 is not in Swift's Glibc module).
        .target(
            name: "HeapStatistics",
            path: "Sources/HeapStatistics"
        ),
        // `swift package benchmark`: the same workloads under package-benchmark.
        .executableTarget(
            name: "OperationsBenchmarks",
            dependencies: [
                "Workloads",
                .product(name: "Operations", package: rootPackage),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/OperationsBenchmarks",
            swiftSettings: [.swiftLanguageMode(.v6)],
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)

if let asyncQueuePath {
    // The package's identity is the name of its folder.
    let asyncQueuePackage = URL(fileURLWithPath: asyncQueuePath).standardizedFileURL.lastPathComponent
    package.dependencies.append(.package(path: asyncQueuePath))
    // The FIFOQueue workloads, in a module of their own that only this case compiles.
    package.targets.append(.target(
        name: "AsyncQueuePeer",
        dependencies: [.product(name: "AsyncQueue", package: asyncQueuePackage)],
        path: "Sources/AsyncQueuePeer",
        swiftSettings: [.swiftLanguageMode(.v6)]
    ))
    for target in package.targets where target.name == "Compare" || target.name == "Instructions" {
        target.dependencies.append("AsyncQueuePeer")
        target.swiftSettings = (target.swiftSettings ?? []) + [.define("ASYNC_QUEUE_PEER")]
    }
}
