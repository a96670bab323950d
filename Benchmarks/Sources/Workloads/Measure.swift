import Dispatch

/// Wall-clock measurement helpers.
public enum Measure {
    /// Seconds taken by `body`.
    public static func seconds(_ body: () -> Void) -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    /// Seconds taken by the async `body`.
    public static func seconds(_ body: () async -> Void) async -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        await body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    /// The fastest of `repetitions` runs (the least disturbed by other load on a shared machine).
    public static func best(of repetitions: Int, _ body: () -> Void) -> Double {
        (0..<max(1, repetitions)).map { _ in seconds(body) }.min()!
    }

    public static func best(of repetitions: Int, _ body: () async -> Void) async -> Double {
        var results: [Double] = []
        for _ in 0..<max(1, repetitions) { results.append(await seconds(body)) }
        return results.min()!
    }
}
