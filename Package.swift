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
        // Executables to run from a checkout (`swift run download-demo`, `swift run examples`,
        // `swift run first-program`),
        // not libraries: a package that depends on `Operations` never links them.
        .executable(name: "download-demo", targets: ["DownloadDemo"]),
        .executable(name: "examples", targets: ["Examples"]),
        .executable(name: "first-program", targets: ["FirstProgram"]),
    ],
    // Optional integrations, off by default: without them, `Operations` imports nothing beyond
    // the standard library, Dispatch and Synchronization, and their packages are not built.
    traits: [
        .trait(
            name: "Tracing",
            description: "Each operation becomes a swift-distributed-tracing span, a child of the ServiceContext current where it was added to a queue (see OpTracing)."
        ),
        .trait(
            name: "Logging",
            description: "OpDiagnostics can route its reports to a swift-log Logger with structured metadata (see OpDiagnostics.log(to:))."
        ),
        .trait(
            name: "ServiceLifecycle",
            description: "OpQueueService: an OpQueue as a swift-service-lifecycle Service that shuts the queue down gracefully when its service group does."
        ),
        .trait(
            name: "Metrics",
            description: "Operations report counters, timers and gauges to swift-metrics, by queue (see OpMetrics)."
        ),
        .default(enabledTraits: []),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
    ],
    targets: [
        .target(
            name: "Operations",
            dependencies: [
                "OperationsRuntimeShims",
                .product(name: "Tracing", package: "swift-distributed-tracing", condition: .when(traits: ["Tracing"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Logging"])),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["ServiceLifecycle"])),
                .product(name: "CoreMetrics", package: "swift-metrics", condition: .when(traits: ["Metrics"])),
            ],
            swiftSettings: strictSettings
        ),
        // The C side of `Operations`: the library's lock (a futex word on Linux), the stripe
        // table, the thread context's storage, and a declaration of one Swift runtime function
        // (a conditional retain), which Swift code cannot declare itself. Not a product.
        .target(name: "OperationsRuntimeShims"),
        .executableTarget(
            name: "DownloadDemo",
            dependencies: ["Operations"],
            swiftSettings: strictSettings
        ),
        // A newcomer's first program: top-level code in `main.swift` that uses `await` (issue 23).
        // It is here so that CI builds and runs top-level code against the library, where overload
        // resolution differs from inside functions (the README's dependency section points to it).
        .executableTarget(
            name: "FirstProgram",
            dependencies: ["Operations"],
            swiftSettings: strictSettings
        ),
        // The examples: every listing of Apple's operation-queue guide, queue features, a
        // downloader, and GCD idioms next to their counterparts. A target of its own so that the
        // tests can run each example; not a product.
        .target(
            name: "ExampleCatalog",
            dependencies: [
                "Operations",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["ServiceLifecycle"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["ServiceLifecycle"])),
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "Examples",
            dependencies: ["ExampleCatalog"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ExamplesTests",
            dependencies: ["ExampleCatalog"],
            swiftSettings: strictSettings
        ),
        // Checks between documents: the README and the DocC catalog say the same thing where they
        // overlap, and the README lists every example.
        .testTarget(
            name: "DocumentationTests",
            dependencies: ["ExampleCatalog"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "OperationsTests",
            dependencies: [
                "Operations",
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing", condition: .when(traits: ["Tracing"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Logging"])),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["ServiceLifecycle"])),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle", condition: .when(traits: ["ServiceLifecycle"])),
                .product(name: "MetricsTestKit", package: "swift-metrics", condition: .when(traits: ["Metrics"])),
            ],
            swiftSettings: strictSettings
        ),
    ]
)
