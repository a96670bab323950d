// swift-tools-version: 6.1
import PackageDescription
import Foundation

// The root package is referenced by path; its identity is the name of its folder, which
// depends on where it was cloned.
let rootPackage = URL(fileURLWithPath: Context.packageDirectory).deletingLastPathComponent().lastPathComponent

// Benchmarks live in their own package so that `swift test` at the root does not build them.
let package = Package(
    name: "swift-operations-benchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(path: ".."),
    ],
    targets: [
        // `swift run -c release compare`: our OpQueue against Foundation's OperationQueue,
        // Dispatch and a TaskGroup, side by side in one run, printed as a table of ratios.
        .executableTarget(
            name: "Compare",
            dependencies: [.product(name: "Operations", package: rootPackage)],
            path: "Sources/Compare",
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
