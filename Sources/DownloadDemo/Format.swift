/// Small text formatting helpers, so that the demo needs no Foundation.
enum Format {
    /// `bytes` in kilobytes with one decimal, such as `18.4 KB`.
    static func kilobytes(_ bytes: Int) -> String {
        let tenths = (bytes * 10 + 512) / 1024
        return "\(tenths / 10).\(tenths % 10) KB"
    }

    /// `value` as eight hexadecimal digits, such as `0x0badf00d`.
    static func hex(_ value: UInt32) -> String {
        "0x" + leftPadded(String(value, radix: 16), to: 8, with: "0")
    }

    /// `value` as sixteen hexadecimal digits.
    static func hex(_ value: UInt64) -> String {
        "0x" + leftPadded(String(value, radix: 16), to: 16, with: "0")
    }

    /// `value` with thousands separators, such as `98,765`.
    static func grouped(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var result = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { result.append(",") }
            result.append(digit)
        }
        return value < 0 ? "-" + result : result
    }

    /// `text` followed by spaces up to `width` characters.
    static func padded(_ text: String, to width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }

    /// `text` preceded by `filler` up to `width` characters.
    static func leftPadded(_ text: String, to width: Int, with filler: Character = " ") -> String {
        text.count >= width ? text : String(repeating: filler, count: width - text.count) + text
    }

    /// `part / whole` as a whole percentage, such as `75%`.
    static func percent(_ part: Int64, of whole: Int64) -> String {
        whole > 0 ? "\(part * 100 / whole)%" : "0%"
    }
}
