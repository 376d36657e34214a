/// A field line made once where all but one piece of it is known in advance: the name
/// recognised and checked, the bytes before and after the piece that changes per message
/// (a route's `Host: api.example.com`, `Authorization: Bearer ` and the token after it).
/// Storing it copies bytes and checks only that piece; `append(name:value:)` would
/// recognise the name, check all of it and write the line a few bytes at a time, for every
/// request. A class, made once and read in place: a copy per request retained and released
/// its two arrays.
public final class PreparedFieldLine: Sendable {
    let known: FieldName
    let nameCount: Int
    /// `name: ` and the start of the value.
    let head: [UInt8]
    /// The end of the value and CRLF.
    let tail: [UInt8]
    /// The name is a token and the fixed parts of the value hold field-value bytes only:
    /// with a clean piece, the line is sent as it is stored (`HTTPFields.Entry`).
    let fixedPartsAreClean: Bool

    /// `name: valuePrefix` + the piece + `valueSuffix`.
    public init(name: HTTPField.Name, valuePrefix: String = "", valueSuffix: String = "") {
        let nameBytes = Array(name.text.utf8)
        known = name.known
        nameCount = nameBytes.count
        head = nameBytes + [ASCII.colon, ASCII.sp] + Array(valuePrefix.utf8)
        tail = Array(valueSuffix.utf8) + [ASCII.cr, ASCII.lf]
        fixedPartsAreClean = (known != .other || (!nameBytes.isEmpty && nameBytes.allSatisfy(ASCII.isTokenByte)))
            && head[(nameCount + 2)...].allSatisfy(ASCII.isFieldValueByte)
            && tail.dropLast(2).allSatisfy(ASCII.isFieldValueByte)
    }
}

extension HTTPFields {
    /// Appends `line` with `piece` in its value.
    public mutating func append(_ line: PreparedFieldLine, filling piece: String = "") {
        addEntry(store(line, filling: piece))
    }

    private mutating func store(_ line: PreparedFieldLine, filling piece: String) -> Entry {
        var piece = piece
        return piece.withUTF8 { piece in
            let count = line.head.count + piece.count + line.tail.count
            let start = appendLines(count: count) { buffer in
                line.head.withUnsafeBytes { buffer.copyMemory(from: $0) }
                UnsafeMutableRawBufferPointer(rebasing: buffer[line.head.count...]).copyMemory(from: UnsafeRawBufferPointer(piece))
                line.tail.withUnsafeBytes {
                    UnsafeMutableRawBufferPointer(rebasing: buffer[(line.head.count + piece.count)...]).copyMemory(from: $0)
                }
            }
            let valueStart = start + line.nameCount + 2
            return Entry(start: UInt32(start), nameCount: UInt32(line.nameCount), valueStart: UInt32(valueStart),
                         valueCount: UInt32(start + count - 2 - valueStart), name: line.known,
                         sendsAsStored: line.fixedPartsAreClean && ASCII.isFieldValue(UnsafeRawBufferPointer(piece)))
        }
    }
}
