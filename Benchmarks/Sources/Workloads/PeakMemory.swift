import Foundation

/// Peak resident memory of this process, from /proc (Linux), in bytes.
public enum PeakMemory {
    public static var peakResidentBytes: Int {
        value(of: "VmHWM:")
    }

    public static var residentBytes: Int {
        value(of: "VmRSS:")
    }

    private static func value(of key: String) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix(key) {
            let digits = line.dropFirst(key.count).filter(\.isNumber)
            return (Int(digits) ?? 0) * 1024
        }
        return 0
    }
}
