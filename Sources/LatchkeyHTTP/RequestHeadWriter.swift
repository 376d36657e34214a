/// Writes a request head once, as it goes to the next hop: the request line, the field
/// lines, the framing line and the empty line (RFC 9112 §3, §5, §6). A proxy's head is
/// mostly lines it already holds (the client's, a route's prepared ones), so they are
/// copied straight to where the head is written instead of being stored as fields first
/// and encoded after. The bytes go to stack memory (the heap once a head outgrows it),
/// each piece with a bounds check and one copy, and become an array once, at the end.
///
/// Every line passes the encoders' last guard (`FieldSectionEncoder`): a name that is not
/// a token is left out, a control byte in a value is written as a space.
public struct RequestHeadWriter: ~Copyable {
    private var memory: UnsafeMutableRawBufferPointer
    private var onHeap = false
    private var count = 0
    private var fieldsStart = 0
    /// A `Connection` line was written: the head's sender must read it (`asksToClose`).
    private var wroteConnection = false

    /// Room on the stack, where most heads fit: more than this, the runtime may ask the
    /// heap for it whatever the head needs.
    private static let stackBytes = 1024

    private init(memory: UnsafeMutableRawBufferPointer) {
        self.memory = memory
    }

    deinit {
        if onHeap { memory.deallocate() }
    }

    /// Writes `method target HTTP/1.1`, then what `body` writes, then the framing line for
    /// `framing` (RFC 9112 §6.2, §6.1) and the empty line. A method that is not a token or
    /// a target with a byte outside visible ASCII makes a head that cannot be sent as it is
    /// (`WrittenRequestHead.bytes` is nil); its fields can.
    public static func write(method: String, target: String, framing: BodyFraming,
                             _ body: (inout RequestHeadWriter) -> Void) -> WrittenRequestHead {
        var method = method, target = target
        return method.withUTF8 { method in
            target.withUTF8 { target in
                withUnsafeTemporaryAllocation(byteCount: stackBytes, alignment: 1) { stack in
                    var writer = RequestHeadWriter(memory: stack)
                    RequestHeadEncoder.appendRequestLine(method: method, target: target, to: &writer)
                    writer.fieldsStart = writer.count
                    body(&writer)
                    return writer.finish(framing, sendable: RequestHeadEncoder.fitsRequestLine(method: method, target: target))
                }
            }
        }
    }

    /// The lines of `fields` but those named in `removed`.
    public mutating func append(_ fields: HTTPFields, removing removed: HTTPFields.NameSet? = nil) {
        if !wroteConnection {
            wroteConnection = removed?.contains(.connection) != true && fields.contains(.connection)
        }
        FieldSectionEncoder.appendLines(fields, removing: removed, to: &self)
    }

    /// `line` with `piece` in its value.
    public mutating func append(_ line: PreparedFieldLine, filling piece: String = "") {
        // A line whose value is all fixed (a route's Host) has nothing to check.
        if piece.isEmpty, line.fixedPartsAreClean {
            line.head.withUnsafeBytes { write($0) }
            line.tail.withUnsafeBytes { write($0) }
            return
        }
        // The string's bytes in place, without the copy `withUTF8` makes of its argument.
        let written = piece.utf8.withContiguousStorageIfAvailable { piece in
            guard line.fixedPartsAreClean, ASCII.isFieldValue(UnsafeRawBufferPointer(piece)) else { return false }
            line.head.withUnsafeBytes { write($0) }
            write(UnsafeRawBufferPointer(piece))
            line.tail.withUnsafeBytes { write($0) }
            return true
        }
        guard written != true else { return }
        // Through the guard, as any other line (and a string whose bytes are elsewhere).
        var fields = HTTPFields()
        fields.append(line, filling: piece)
        append(fields)
    }

    /// `name: value`.
    public mutating func append(name: HTTPField.Name, value: String) {
        var fields = HTTPFields()
        fields.append(name: name, value: value)
        append(fields)
    }

    private mutating func finish(_ framing: BodyFraming, sendable: Bool) -> WrittenRequestHead {
        let fieldsEnd = count
        switch framing {
        case .none:
            break
        case .length(let length):
            write("Content-Length: ")
            var digits = String(length)
            digits.withUTF8 { write(UnsafeRawBufferPointer($0)) }
            write(ASCII.cr)
            write(ASCII.lf)
        case .chunked:
            write("Transfer-Encoding: chunked\r\n")
        }
        write(ASCII.cr)
        write(ASCII.lf)
        // From a buffer pointer: `init(unsafeUninitializedCapacity:)` reached the array's
        // allocation through its unspecialized generic entry point.
        let bytes = [UInt8](UnsafeRawBufferPointer(rebasing: memory[..<count]))
        return WrittenRequestHead(head: bytes, sendable: sendable, fieldLines: fieldsStart..<fieldsEnd, framing: framing,
                                  hasConnectionField: wroteConnection)
    }

    /// Room for `more` bytes: twice as much, or what is needed, on the heap.
    @inline(never)
    private mutating func grow(_ more: Int) {
        let grown = UnsafeMutableRawBufferPointer.allocate(byteCount: Swift.max(count + more, 2 * memory.count), alignment: 1)
        grown.copyMemory(from: UnsafeRawBufferPointer(rebasing: memory[..<count]))
        if onHeap { memory.deallocate() }
        memory = grown
        onHeap = true
    }
}

extension RequestHeadWriter: ByteSink {
    @inline(__always)
    mutating func write(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress else { return }
        if count + bytes.count > memory.count { grow(bytes.count) }
        memory.baseAddress.unsafelyUnwrapped.advanced(by: count).copyMemory(from: source, byteCount: bytes.count)
        count += bytes.count
    }

    @inline(__always)
    mutating func write(_ byte: UInt8) {
        if count == memory.count { grow(1) }
        memory[count] = byte
        count += 1
    }
}

/// A request head as `RequestHeadWriter` wrote it.
public struct WrittenRequestHead: Sendable {
    private let head: [UInt8]
    /// The request line is fit to be sent (`RequestHeadEncoder`).
    private let sendable: Bool
    /// The field lines in `bytes`, the framing line not among them.
    let fieldLines: Range<Int>
    /// How the body is framed: the line written for it.
    public let framing: BodyFraming
    let hasConnectionField: Bool

    init(head: [UInt8], sendable: Bool, fieldLines: Range<Int>, framing: BodyFraming, hasConnectionField: Bool) {
        self.head = head
        self.sendable = sendable
        self.fieldLines = fieldLines
        self.framing = framing
        self.hasConnectionField = hasConnectionField
    }

    /// The whole head, the empty line included: what goes to the next hop. Nil when the
    /// method or target was not fit for a request line.
    public var bytes: [UInt8]? { sendable ? head : nil }

    /// The field lines read back, the framing line not among them: for a sender that
    /// writes its own head (libcurl) or adds to it (an Upgrade).
    public var fields: HTTPFields {
        head.withUnsafeBytes { bytes in
            // The writer wrote each line as the parser reads it; as a response's, for the
            // bytes a client sent as obs-text and that are kept as they came.
            do {
                return try HTTPFields(parsing: bytes, fieldLines, fieldCount: 16, .response)
            } catch {
                assertionFailure("a written field line that does not parse")
                return HTTPFields()
            }
        }
    }

    /// The head says `Connection: close` (RFC 9112 §9.6): the connection is not reused.
    public var asksToClose: Bool {
        hasConnectionField && fields.connectionLists("close")
    }
}
