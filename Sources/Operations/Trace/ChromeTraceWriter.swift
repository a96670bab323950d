/// Builds the JSON of a Chrome trace into one string, appending in place: a trace of 100,000
/// operations is tens of megabytes.
struct ChromeTraceWriter {
    private var text = "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n"
    private var isFirstEvent = true

    /// Appends one event, `{…}`, whose members `body` writes.
    mutating func event(_ body: (inout ChromeTraceWriter) -> Void) {
        text += isFirstEvent ? "{" : ",\n{"
        isFirstEvent = false
        body(&self)
        text += "}"
    }

    /// Appends one event whose members are `members`.
    mutating func event(_ members: String) {
        event { $0.raw(members) }
    }

    /// Appends `text` as it is.
    mutating func raw(_ text: String) {
        self.text += text
    }

    mutating func integer(_ value: Int) {
        text += String(value)
    }

    /// Appends `duration` in microseconds, the format's unit, with three decimals.
    mutating func microseconds(_ duration: Duration) {
        let nanoseconds = max(0, duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
        text += String(nanoseconds / 1000)
        let fraction = Int(nanoseconds % 1000)
        text += fraction < 10 ? ".00" : fraction < 100 ? ".0" : "."
        text += String(fraction)
    }

    /// Appends `string` as a JSON string literal.
    mutating func string(_ string: String) {
        text += "\""
        if !string.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            text += string
        } else {
            for scalar in string.unicodeScalars {
                switch scalar {
                case "\"": text += "\\\""
                case "\\": text += "\\\\"
                case "\n": text += "\\n"
                case "\r": text += "\\r"
                case "\t": text += "\\t"
                case _ where scalar.value < 0x20:
                    let hex = String(scalar.value, radix: 16)
                    text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                default:
                    text.unicodeScalars.append(scalar)
                }
            }
        }
        text += "\""
    }

    /// The finished JSON document.
    consuming func finish() -> String {
        text += "\n]}\n"
        return text
    }
}
