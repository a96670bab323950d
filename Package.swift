// swift-tools-version: 6.1
import PackageDescription

let strictSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "swift-operations",
    // `Synchronization` (Atomic) needs these on Apple platforms.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "Operations", targets: ["Operations"]),
        .executable(name: "download-demo", targets: ["DownloadDemo"]),
    ],
    targets: [
        .target(
            name: "Operations",
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "DownloadDemo",
            dependencies: ["Operations"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "OperationsTests",
            dependencies: ["Operations"],
            swiftSettings: strictSettings
        ),
    ]
)
